package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

func tfJobConfig(name string, workers int, extra string) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_tf_job" "test" {
  name         = %[1]q
  image        = "tensorflow/tensorflow:2.15.0-gpu"
  command      = ["python", "/workspace/train.py"]
  worker_count = %[2]d
  gpus         = 1
  tolerations  = ["gpu_node"]
%[3]s}
`, name, workers, extra)
}

// checkOnGPUNodes checks that every pod of the job tolerating gpu_node landed on a gpu_node node,
// as the seed's walkthrough has it.
func checkOnGPUNodes(a *api, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, p := range a.pods("default", jobs.TF.PodSelector(name)) {
			if n := p.Spec.NodeName; n != "cn-beijing.192.168.3.228" && n != "cn-beijing.192.168.3.229" {
				return fmt.Errorf("pod %s runs on %s, not on a gpu_node node", p.Name, n)
			}
		}
		return nil
	}
}

// Arena's `submit tf` with a chief, parameter servers and workers, tolerating the GPU nodes:
// every task is told of the whole cluster (MultiWorkerMirroredStrategy and ParameterServerStrategy need it), and a new
// worker count replaces the job, since a running TensorFlow cluster cannot take one.
func TestAccTFJob_everyTaskSeesTheWholeCluster(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-tf")
	const roles = "  ps_count     = 2\n  chief        = true\n"
	var uid types.UID
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: append([]resource.TestStep{
			{
				Config: tfJobConfig(name, 3, roles),
				Check: resource.ComposeTestCheckFunc(
					checkTFConfig(a, name, map[string]int{"chief": 1, "ps": 2, "worker": 3}),
					checkOnGPUNodes(a, name),
					func(*terraform.State) error {
						job, err := a.get(jobs.TF.GVR, "default", name)
						if err == nil {
							uid = job.GetUID()
						}
						return err
					},
				),
			},
			{
				Config: tfJobConfig(name, 4, roles),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_tf_job.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkTFConfig(a, name, map[string]int{"chief": 1, "ps": 2, "worker": 4}),
					func(*terraform.State) error {
						if job, err := a.get(jobs.TF.GVR, "default", name); err != nil || job.GetUID() == uid {
							return fmt.Errorf("the TFJob was not replaced (uid %v, err %v)", uid, err)
						}
						return nil
					},
				),
			},
			{
				ResourceName:            "training_tf_job.test",
				ImportState:             true,
				ImportStateId:           "default/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts"},
			},
		}, reimport("training_tf_job.test", "default/"+name, tfJobConfig(name, 4, roles), plancheck.ExpectEmptyPlan())...),
	})
}

// With dynamic workers (a parameter-server job without a chief) the worker count changes in
// place: new workers join, the parameter server keeps running.
func TestAccTFJob_dynamicWorkersRescaleInPlace(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-tfd")
	const extra = "  ps_count        = 1\n  dynamic_workers = true\n"
	var ps types.UID
	psPod := func(*terraform.State) error {
		pods, err := a.runningPods(jobs.TF.PodSelector(name)+","+jobs.ReplicaTypeLabel+"=ps", 1)
		if err != nil {
			return err
		}
		if ps != "" && pods[0].UID != ps {
			return fmt.Errorf("the parameter server was restarted by the rescale")
		}
		ps = pods[0].UID
		return expectGPUVisibility(pods[0])
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: []resource.TestStep{
			{Config: tfJobConfig(name, 2, extra), Check: psPod},
			{
				Config: tfJobConfig(name, 3, extra),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_tf_job.test", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(psPod, func(*terraform.State) error {
					_, err := a.runningPods(jobs.TF.PodSelector(name)+","+jobs.ReplicaTypeLabel+"=worker", 3)
					return err
				}),
			},
		},
	})
}
