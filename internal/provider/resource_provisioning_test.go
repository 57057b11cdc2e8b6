package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// provisionedQueue is a ClusterQueue of 4 GPUs whose admission check asks for capacity with a
// ProvisioningRequestConfig (declared unless config is false; the check names it either way),
// and its LocalQueue; check is the check's parameters line.
func provisionedQueue(prefix string, config bool, check string) string {
	return outcomeQueue(prefix, config, "", check)
}

// outcomeQueue is provisionedQueue whose config asks the local cluster's provisioner for an
// outcome of every request ("Failed"; "" none), and retries none.
func outcomeQueue(prefix string, config bool, outcome, check string) string {
	prc := ""
	if config {
		// The provisioned nodes' group, from the request's class detail, as a job's node selector.
		params := fmt.Sprintf("  node_selector_from_class_details = { %q = %q }\n", provisionedNodeLabel, "NodeGroup")
		if outcome != "" {
			params = fmt.Sprintf("  parameters         = { SimulatedOutcome = %q }\n  retry_limit        = 0\n", outcome)
		}
		prc = fmt.Sprintf(`
resource "training_provisioning_request_config" "capacity" {
  name               = "%[1]s-capacity"
  provisioning_class = "check-capacity.autoscaling.x-k8s.io"
  managed_resources  = ["nvidia.com/gpu"]
%[2]s}
`, prefix, params)
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

// checkState is the state Kueue gives a Workload's admission check ("Pending", "Ready", "Retry",
// "Rejected"), "" for none yet.
func checkState(wl *unstructured.Unstructured, check string) string {
	checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	for _, c := range checks {
		if m, ok := c.(map[string]any); ok && m["name"] == check {
			state, _ := m["state"].(string)
			return state
		}
	}
	return ""
}

// The marks of the nodes the local cluster's provisioner adds for a request (see
// cluster/components/provisioner): their group's label, whose value the request's class detail
// NodeGroup holds, and their taint.
const (
	provisionedNodeLabel = "provisioner.kubetrain.io/node-group"
	provisionedTaint     = "provisioner.kubetrain.io/provisioned"
)

// On the local cluster, whose provisioner answers Kueue's ProvisioningRequests as a cloud's
// autoscaler would: a job queued where the admission check asks for capacity is admitted once its
// request is provisioned (the apply's wait for admission ends, the check Ready), and its workers
// run on the nodes added for it, which go with the job; one whose request fails, with no
// retries, is never admitted: Kueue rejects the check and deactivates its workload.
func TestAccKueue_provisioningCheckAdmitsOnceProvisionedAndNotWhenItFails(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	for _, outcome := range []string{"", "Failed"} {
		t.Run(fmt.Sprintf("outcome %q", outcome), func(t *testing.T) {
			// Provisioned capacity adds nodes, which tests of the nodes must not see.
			if outcome == "" {
				nodeTaintsMu.Lock()
				defer nodeTaintsMu.Unlock()
			} else {
				nodeTaintsMu.RLock()
				defer nodeTaintsMu.RUnlock()
			}
			prefix := acctest.RandomWithPrefix("tf-acc-prov")
			check := `provisioning_request_config = training_provisioning_request_config.capacity.name`
			job := queuedJob(jobs.MPI, "job", prefix+"-job", `  wait_for = "created"`)
			if outcome == "" {
				job = strings.Replace(queuedJob(jobs.MPI, "job", prefix+"-job", `  wait_for = "admitted"`), `tolerations  = ["node-role.kubernetes.io/control-plane"]`,
					fmt.Sprintf(`tolerations  = ["node-role.kubernetes.io/control-plane", %q]`, provisionedTaint), 1)
			}
			w := newWorkspace(t)
			t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
			w.write(outcomeQueue(prefix, true, outcome, check) + job)
			w.run("apply", "-auto-approve", "-input=false")
			// Provisioned: the check Ready and the job admitted. Failed with no retries left: Kueue
			// rejects the check and deactivates the workload, which waits, never admitted.
			want, done := "check Ready, admitted", func(wl *unstructured.Unstructured) bool {
				return checkState(wl, prefix+"-capacity") == "Ready" && conditionTrue(wl, "Admitted")
			}
			if outcome != "" {
				want, done = "not admitted, evicted DeactivatedDueToAdmissionCheck", func(wl *unstructured.Unstructured) bool {
					return !conditionTrue(wl, "Admitted") && conditionTrue(wl, "Evicted") && conditionReason(wl, "Evicted") == "DeactivatedDueToAdmissionCheck"
				}
			}
			var state string
			for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
				wl := a.workloadOf(jobs.MPI, prefix+"-job")
				if wl == nil {
					continue
				}
				if !done(wl) {
					state = fmt.Sprintf("check %s, admitted %v, evicted %q", checkState(wl, prefix+"-capacity"), conditionTrue(wl, "Admitted"), conditionReason(wl, "Evicted"))
					continue
				}
				if outcome == "" {
					a.runsOnProvisionedNodes(t, prefix+"-job")
					w.run("destroy", "-auto-approve", "-input=false")
					a.provisionedNodesGone(t, prefix)
				}
				return
			}
			var said []string
			if wl := a.workloadOf(jobs.MPI, prefix+"-job"); wl != nil {
				status, _ := json.Marshal(wl.Object["status"])
				said = append(said, "Workload status: "+string(status))
			}
			if prs, err := a.dyn.Resource(provisioningRequestGVR).Namespace("default").List(context.Background(), metav1.ListOptions{}); err == nil {
				for _, pr := range prs.Items {
					body, _ := json.Marshal(map[string]any{"spec": pr.Object["spec"], "status": pr.Object["status"]})
					said = append(said, "ProvisioningRequest "+pr.GetName()+": "+string(body))
				}
			}
			t.Errorf("the job's workload: %s; want %s\n%s", state, want, strings.Join(said, "\n"))
		})
	}
}

// runsOnProvisionedNodes waits until every worker of the MPI job runs on a node the provisioner
// added (60 s at most).
func (a *api) runsOnProvisionedNodes(t *testing.T, job string) {
	t.Helper()
	var placed []string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		placed = nil
		onProvisioned := 0
		workers := 0
		for _, p := range a.pods("default", jobs.MPI.PodSelector(job)) {
			if !strings.Contains(p.Name, "-worker-") {
				continue
			}
			workers++
			placed = append(placed, p.Name+" on "+p.Spec.NodeName)
			if p.Spec.NodeName == "" {
				continue
			}
			if n, err := a.kube.CoreV1().Nodes().Get(context.Background(), p.Spec.NodeName, metav1.GetOptions{}); err == nil && n.Labels[provisionedNodeLabel] != "" {
				onProvisioned++
			}
		}
		if workers == 2 && onProvisioned == workers {
			return
		}
	}
	t.Errorf("the job's workers did not all run on provisioned nodes within 60 s: %v", placed)
}

// provisionedNodesGone waits until no node the provisioner added for the test's requests is left
// (60 s at most): Kueue deletes a request with its workload, and the provisioner its nodes.
func (a *api) provisionedNodesGone(t *testing.T, prefix string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		nodes, err := a.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: provisionedNodeLabel})
		if err != nil {
			t.Fatal(err)
		}
		left = nil
		for _, n := range nodes.Items {
			if strings.Contains(n.Annotations["provisioner.kubetrain.io/request"], prefix) {
				left = append(left, n.Name)
			}
		}
		if len(left) == 0 {
			return
		}
	}
	t.Errorf("nodes provisioned for the destroyed job are left after 60 s: %v", left)
}

// provisioningRequestGVR is the API of the ProvisioningRequests Kueue makes.
var provisioningRequestGVR = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1", Resource: "provisioningrequests"}

// conditionReason is the reason of obj's condition of that type, "" for none.
func conditionReason(obj *unstructured.Unstructured, kind string) string {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == kind {
			reason, _ := m["reason"].(string)
			return reason
		}
	}
	return ""
}
