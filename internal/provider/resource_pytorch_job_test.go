package provider

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

func pytorchJobConfig(name string, workers int, extra string) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_pytorch_job" "test" {
  name         = %[1]q
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = %[2]d
  gpus         = 1
  tolerations  = ["gpu_node"]
%[3]s}

data "training_job" "test" {
  kind = "pytorch"
  name = training_pytorch_job.test.name
}
`, name, workers, extra)
}

// checkPyTorchEnv checks, in every pod, the environment training-operator generated for torchrun.
func checkPyTorchEnv(a *api, name string, pods int, want func(p corev1.Pod) map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		list, err := a.runningPods(jobs.PyTorch.PodSelector(name), pods)
		if err != nil {
			return err
		}
		for _, p := range list {
			if n := p.Spec.NodeName; n != "cn-beijing.192.168.3.228" && n != "cn-beijing.192.168.3.229" {
				return fmt.Errorf("pod %s runs on %s, not on a gpu_node node", p.Name, n)
			}
			for k, v := range want(p) {
				if got, _ := env(p.Spec.Containers[0], k); got != v {
					return fmt.Errorf("pod %s: %s=%q, want %q", p.Name, k, got, v)
				}
			}
		}
		return nil
	}
}

// A static PyTorchJob: a master and workers, each told the master's address, the world size and
// its rank; a new worker count replaces the job. The data source reads it as `arena get` does.
func TestAccPyTorchJob_masterAndWorkers(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-pt")
	staticEnv := func(workers int) func(corev1.Pod) map[string]string {
		return func(p corev1.Pod) map[string]string {
			index, _ := strconv.Atoi(p.Labels["training.kubeflow.org/replica-index"])
			rank := index
			if p.Labels[jobs.ReplicaTypeLabel] == "worker" {
				rank = index + 1
			}
			return map[string]string{"MASTER_ADDR": name + "-master-0", "MASTER_PORT": "23456", "WORLD_SIZE": strconv.Itoa(1 + workers),
				"RANK": strconv.Itoa(rank), "PET_NODE_RANK": strconv.Itoa(rank), "PET_NNODES": strconv.Itoa(1 + workers), "PET_NPROC_PER_NODE": "1"}
		}
	}
	var uid types.UID
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: []resource.TestStep{
			{
				Config: pytorchJobConfig(name, 2, ""),
				Check: resource.ComposeTestCheckFunc(checkPyTorchEnv(a, name, 3, staticEnv(2)), func(*terraform.State) error {
					job, err := a.get(jobs.PyTorch.GVR, "default", name)
					if err == nil {
						uid = job.GetUID()
					}
					return err
				}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_pytorch_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					statecheck.ExpectKnownValue("training_pytorch_job.test", tfjsonpath.New("instances"), knownvalue.ListSizeExact(3)),
					statecheck.ExpectKnownValue("data.training_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					statecheck.ExpectKnownValue("data.training_job.test", tfjsonpath.New("instances"), knownvalue.ListSizeExact(3)),
				},
			},
			{
				Config: pytorchJobConfig(name, 3, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_pytorch_job.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeTestCheckFunc(checkPyTorchEnv(a, name, 4, staticEnv(3)), func(*terraform.State) error {
					if job, err := a.get(jobs.PyTorch.GVR, "default", name); err != nil || job.GetUID() == uid {
						return fmt.Errorf("the PyTorchJob was not replaced (uid %v, err %v)", uid, err)
					}
					return nil
				}),
			},
			{
				ResourceName:            "training_pytorch_job.test",
				ImportState:             true,
				ImportStateId:           "default/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts"},
			},
		},
	})
}

// An elastic PyTorchJob: workers only, told to meet at c10d on the first worker within the
// bounds; a new worker count is an in-place update that keeps the running workers' pods.
func TestAccPyTorchJob_elasticRescaleInPlace(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-pte")
	const elastic = "  elastic = {\n    min_workers  = 1\n    max_workers  = 4\n    max_restarts = 3\n  }\n"
	elasticEnv := func(corev1.Pod) map[string]string {
		return map[string]string{"PET_NNODES": "1:4", "PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": name + "-worker-0:23456",
			"PET_MAX_RESTARTS": "3", "PET_NPROC_PER_NODE": "1", "MASTER_ADDR": "", "WORLD_SIZE": ""}
	}
	uids := map[string]types.UID{}
	keptWorkers := func(*terraform.State) error {
		for _, p := range a.pods("default", jobs.PyTorch.PodSelector(name)) {
			if was, ok := uids[p.Name]; ok && was != p.UID {
				return fmt.Errorf("worker %s was replaced by the rescale", p.Name)
			}
			uids[p.Name] = p.UID
		}
		return nil
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("training_pytorch_job.test", plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: []resource.TestStep{
			{Config: pytorchJobConfig(name, 2, elastic), Check: resource.ComposeTestCheckFunc(checkPyTorchEnv(a, name, 2, elasticEnv), keptWorkers)},
			{Config: pytorchJobConfig(name, 3, elastic), ConfigPlanChecks: update,
				Check: resource.ComposeTestCheckFunc(checkPyTorchEnv(a, name, 3, elasticEnv), keptWorkers)},
			{Config: pytorchJobConfig(name, 1, elastic), ConfigPlanChecks: update,
				Check: resource.ComposeTestCheckFunc(checkPyTorchEnv(a, name, 1, elasticEnv), keptWorkers)},
			{
				ResourceName:            "training_pytorch_job.test",
				ImportState:             true,
				ImportStateId:           "default/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts"},
			},
		},
	})
}
