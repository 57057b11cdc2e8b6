package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

func tfJobConfig(name string, workers int) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_tf_job" "test" {
  name         = %[1]q
  image        = "tensorflow/tensorflow:2.15.0-gpu"
  command      = ["python", "/workspace/train.py"]
  worker_count = %[2]d
  ps_count     = 1
  chief        = true
  gpus         = 1
  tolerations  = ["gpu_node"]
}
`, name, workers)
}

// The seed says tolerations apply to MPI and TF jobs: a TF job tolerating gpu_node lands only
// on the gpu_node nodes, and is rescaled in place.
func TestAccTFJob_tolerateGPUNodeAndRescale(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-tf")
	onGPUNode := map[string]bool{"cn-beijing.192.168.3.228": true, "cn-beijing.192.168.3.229": true}
	checkPods := func(workers int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			return a.waitPods(jobs.KubeflowPodSelector(name), func(pods []corev1.Pod) bool {
				roles := map[string]int{}
				for _, p := range pods {
					if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || !onGPUNode[p.Spec.NodeName] {
						return false
					}
					roles[p.Labels[jobs.ReplicaTypeLabel]]++
				}
				return roles["worker"] == workers && roles["ps"] == 1 && roles["chief"] == 1 && len(pods) == workers+2
			})
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if _, err := a.get(jobs.TFJobGVR, "default", name); !apierrors.IsNotFound(err) {
				return fmt.Errorf("TFJob %s still exists after destroy (err=%v)", name, err)
			}
			if pods := a.pods("default", jobs.KubeflowPodSelector(name)); len(pods) > 0 {
				return fmt.Errorf("%d pods of TFJob %s are left after destroy", len(pods), name)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: tfJobConfig(name, 2),
				Check:  checkPods(2),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_tf_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					statecheck.ExpectKnownValue("training_tf_job.test", tfjsonpath.New("instances"), knownvalue.ListSizeExact(4)),
				},
			},
			{
				Config: tfJobConfig(name, 3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_tf_job.test", plancheck.ResourceActionUpdate),
				}},
				Check: checkPods(3),
			},
			{
				ResourceName:            "training_tf_job.test",
				ImportState:             true,
				ImportStateId:           "default/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"duration", "timeouts"},
			},
		},
	})
}
