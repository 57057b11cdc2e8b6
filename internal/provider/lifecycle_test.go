package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// The objects a platform team declares around its jobs (Kueue's flavors, queues, cohorts and priorities, MultiKueue's
// clusters, configs and admission checks, a Trainer runtime) go through their whole life in one
// configuration: made, changed in place where the change allows it, imported exactly, replaced
// when renamed, destroyed with nothing left; and the queue_problems function finds nothing wrong
// with queues that cover their flavor.
func TestAccEveryObjectAroundTheJobsUpdatesInPlaceImportsAndIsReplacedWhenRenamed(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-life")
	config := func(suffix string, v int) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_resource_flavor" "gpu" {
  name        = "%[1]s-gpu%[2]s"
  node_labels = { "example.com/gpu" = "v%[3]d" }
}

resource "training_cluster_queue" "team" {
  name                = "%[1]s-team%[2]s"
  cohort              = "%[1]s-org%[3]d"
  fair_sharing_weight = "%[3]d"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "%[3]d"
      }
    }
  }
}

resource "training_local_queue" "team" {
  name          = "%[1]s-team%[2]s"
  cluster_queue = training_cluster_queue.team.name
  stop_policy   = %[4]q
}

resource "training_multikueue_cluster" "worker" {
  name              = "%[1]s-worker%[2]s"
  kubeconfig_secret = "%[1]s-kubeconfig%[3]d"
}

resource "training_multikueue_config" "fleet" {
  name     = "%[1]s-fleet%[2]s"
  clusters = slice([training_multikueue_cluster.worker.name, "%[1]s-other"], 0, %[3]d)
}

resource "training_multikueue_config" "spare" {
  name     = "%[1]s-spare%[2]s"
  clusters = [training_multikueue_cluster.worker.name]
}

resource "training_admission_check" "fleet" {
  name              = "%[1]s-check%[2]s"
  multikueue_config = %[3]d == 1 ? training_multikueue_config.fleet.name : training_multikueue_config.spare.name
}

resource "training_cohort" "dept" {
  name                = "%[1]s-dept%[2]s"
  parent              = "%[1]s-org%[3]d"
  fair_sharing_weight = "%[3]d500m"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "%[3]d"
        lending_limit = "%[3]d0"
      }
    }
  }
}

resource "training_provisioning_request_config" "capacity" {
  name               = "%[1]s-capacity%[2]s"
  provisioning_class = "check-capacity.autoscaling.x-k8s.io"
  parameters         = { v = "%[3]d" }
  retry_limit        = %[3]d
}

resource "training_admission_check" "capacity" {
  name                        = "%[1]s-capacity%[2]s"
  provisioning_request_config = training_provisioning_request_config.capacity.name
}

resource "training_workload_priority_class" "urgent" {
  name        = "%[1]s-urgent%[2]s"
  value       = %[3]d00
  description = "urgent v%[3]d"
}

resource "training_runtime" "torch" {
  name      = "%[1]s-rt%[2]s"
  namespace = "default"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.%[3]d"
  command   = ["torchrun", "/workspace/train.py"]
}
`, prefix, suffix, v, map[int]string{1: "None", 2: "Hold"}[v])
	}
	// The import steps verify every resource and cannot compare an output: the function's
	// output is in the other steps' configurations.
	withProblems := func(config string) string {
		return config + `
output "queue_problems" {
  value = provider::training::queue_problems([training_resource_flavor.gpu], [training_cluster_queue.team], [training_cohort.dept],
    [training_admission_check.fleet, training_admission_check.capacity], [training_provisioning_request_config.capacity])
}
`
	}
	addresses := []string{
		"training_resource_flavor.gpu", "training_cluster_queue.team", "training_local_queue.team",
		"training_multikueue_cluster.worker", "training_multikueue_config.fleet", "training_admission_check.fleet",
		"training_runtime.torch", "training_workload_priority_class.urgent", "training_cohort.dept",
		"training_provisioning_request_config.capacity",
	}
	expectAll := func(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
		var checks []plancheck.PlanCheck
		for _, address := range addresses {
			checks = append(checks, plancheck.ExpectResourceAction(address, action))
		}
		return resource.ConfigPlanChecks{PreApply: checks}
	}
	imported := func(address, id string, ignore ...string) resource.TestStep {
		return resource.TestStep{Config: config("", 2), ResourceName: address, ImportState: true, ImportStateId: id, ImportStateVerify: true,
			ImportStateVerifyIgnore: append([]string{"timeouts"}, ignore...)}
	}
	// MultiKueue's condition is in the state as it was at create and at the last refresh (the
	// attributes' docs say so); an update leaves it, and an import reads the newer one.
	condition := []string{"active", "reason", "message"}
	noProblems := []statecheck.StateCheck{statecheck.ExpectKnownOutputValue("queue_problems", knownvalue.ListExact([]knownvalue.Check{}))}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeftNamed(a, prefix),
		Steps: []resource.TestStep{
			{Config: withProblems(config("", 1)), ConfigStateChecks: noProblems},
			{Config: withProblems(config("", 2)), ConfigPlanChecks: expectAll(plancheck.ResourceActionUpdate), ConfigStateChecks: noProblems},
			imported("training_resource_flavor.gpu", prefix+"-gpu"),
			imported("training_cluster_queue.team", prefix+"-team"),
			imported("training_local_queue.team", "default/"+prefix+"-team"),
			imported("training_multikueue_cluster.worker", prefix+"-worker", condition...),
			imported("training_multikueue_config.fleet", prefix+"-fleet"),
			imported("training_admission_check.fleet", prefix+"-check", condition...),
			imported("training_runtime.torch", "default/"+prefix+"-rt"),
			imported("training_workload_priority_class.urgent", prefix+"-urgent"),
			imported("training_cohort.dept", prefix+"-dept"),
			imported("training_provisioning_request_config.capacity", prefix+"-capacity"),
			imported("training_admission_check.capacity", prefix+"-capacity", condition...),
			{Config: withProblems(config("-b", 2)), ConfigPlanChecks: expectAll(plancheck.ResourceActionDestroyBeforeCreate), ConfigStateChecks: noProblems},
		},
	})
}

// kueueObject is a kind of object the tests look for by name, in namespace ("" for a
// cluster-scoped one).
type kueueObject struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// checkNothingLeftNamed checks that no Kueue object, and no runtime in namespace default, has a
// name that starts with prefix.
func checkNothingLeftNamed(a *api, prefix string) resource.TestCheckFunc {
	return checkNoneNamed(a, prefix,
		kueueObject{kueue.ResourceFlavorGVR, ""}, kueueObject{kueue.ClusterQueueGVR, ""}, kueueObject{kueue.LocalQueueGVR, "default"},
		kueueObject{kueue.MultiKueueClusterGVR, ""}, kueueObject{kueue.MultiKueueConfigGVR, ""}, kueueObject{kueue.AdmissionCheckGVR, ""},
		kueueObject{jobs.TrainingRuntimeGVR, "default"}, kueueObject{kueue.WorkloadPriorityClassGVR, ""}, kueueObject{kueue.CohortGVR, ""},
		kueueObject{kueue.ProvisioningRequestConfigGVR, ""})
}

// checkNoneNamed checks that destroy left no object of those kinds whose name starts with prefix.
func checkNoneNamed(a *api, prefix string, kinds ...kueueObject) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, o := range kinds {
			list, err := a.dyn.Resource(o.gvr).Namespace(o.namespace).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, item := range list.Items {
				if strings.HasPrefix(item.GetName(), prefix) {
					return fmt.Errorf("%s %s is left after destroy", o.gvr.Resource, item.GetName())
				}
			}
		}
		return nil
	}
}
