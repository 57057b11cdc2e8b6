package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// provisionedQueue is a ClusterQueue of 4 GPUs whose admission check asks for capacity with a
// ProvisioningRequestConfig (declared unless config is false; the check names it either way),
// and its LocalQueue; check is the check's parameters line.
func provisionedQueue(prefix string, config bool, check string) string {
	prc := ""
	if config {
		prc = fmt.Sprintf(`
resource "training_provisioning_request_config" "capacity" {
  name               = "%[1]s-capacity"
  provisioning_class = "check-capacity.autoscaling.x-k8s.io"
  managed_resources  = ["nvidia.com/gpu"]
}
`, prefix)
	}
	return providerConfig() + prc + fmt.Sprintf(`
resource "training_resource_flavor" "gpu" {
  name        = "%[1]s-gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node", "ssd_node"]
}

resource "training_admission_check" "capacity" {
  name = "%[1]s-capacity"
  %[2]s
}

resource "training_cluster_queue" "team" {
  name             = "%[1]s-team"
  admission_checks = [training_admission_check.capacity.name]
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "4"
      }
    }
  }
}

resource "training_local_queue" "team" {
  name          = "%[1]s"
  cluster_queue = training_cluster_queue.team.name
}
`, prefix, check)
}

// A job queued where an admission check asks for capacity is predicted admitted once its
// capacity is provisioned, the check and its config named; with the config gone, the plan says
// Kueue would never admit it. An admission check moved from provisioning to MultiKueue is
// replaced (Kueue keeps a check's controller as it was made), and one naming neither is refused.
func TestAccKueue_provisioningCheckIsInThePlanAndMovesByReplacement(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	prefix := acctest.RandomWithPrefix("tf-acc-prc")
	provisioned := `provisioning_request_config = "` + prefix + `-capacity"`
	job := queuedJob(jobs.MPI, "job", prefix+"-job", "")
	w := newWorkspace(t)
	t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
	w.write(provisionedQueue(prefix, true, provisioned+"\n  depends_on = [training_provisioning_request_config.capacity]"))
	w.run("apply", "-auto-approve", "-input=false")
	if _, err := a.get(kueue.ProvisioningRequestConfigGVR, "", prefix+"-capacity"); err != nil {
		t.Fatal(err)
	}
	jobWarning := func(out string) string {
		return strings.Join(planDiagnostics(t, out)["training_mpi_job.job"], "\n")
	}
	w.write(provisionedQueue(prefix, true, provisioned+"\n  depends_on = [training_provisioning_request_config.capacity]") + job)
	if said := jobWarning(w.run("plan", "-json", "-input=false")); !strings.Contains(said, "once its capacity is provisioned") ||
		!strings.Contains(said, prefix+"-capacity (ProvisioningRequestConfig "+prefix+"-capacity)") {
		t.Errorf("the job's plan says:\n%s\nwant it admitted once its capacity is provisioned, naming the check and its config", said)
	}
	w.write(provisionedQueue(prefix, false, provisioned))
	w.run("apply", "-auto-approve", "-input=false")
	w.write(provisionedQueue(prefix, false, provisioned) + job)
	if said := jobWarning(w.run("plan", "-json", "-input=false")); !strings.Contains(said, "never admit it while its admission check's config is missing") {
		t.Errorf("with the config gone, the job's plan says:\n%s\nwant that Kueue would never admit it", said)
	}
	w.write(provisionedQueue(prefix, false, `multikueue_config = "`+prefix+`-fleet"`))
	if action := plannedAction(t, w.run("plan", "-json", "-input=false"), "training_admission_check.capacity"); action != "replace" {
		t.Errorf("an admission check moved to MultiKueue is planned as %q; want replace", action)
	}
	w.write(provisionedQueue(prefix, false, ""))
	if out, err := w.try(nil, "plan", "-input=false"); err == nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "provisioning_request_config") {
		t.Errorf("a check naming neither config planned:\n%s", out)
	}
}

// plannedAction is the action a plan's JSON lines give a resource ("create", "update",
// "replace", ...), "" for none.
func plannedAction(t *testing.T, planJSON, address string) string {
	t.Helper()
	for _, line := range strings.Split(planJSON, "\n") {
		var change struct {
			Type   string `json:"type"`
			Change struct {
				Resource struct {
					Addr string `json:"addr"`
				} `json:"resource"`
				Action string `json:"action"`
			} `json:"change"`
		}
		if json.Unmarshal([]byte(line), &change) == nil && change.Type == "planned_change" && change.Change.Resource.Addr == address {
			return change.Change.Action
		}
	}
	return ""
}
