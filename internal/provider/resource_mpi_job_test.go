package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// The local cluster's nodes, from the Arena walkthrough's layout.
const ssdNode = "cn-beijing.192.168.3.230"

var gpuNodes = map[string]bool{"cn-beijing.192.168.3.228": true, "cn-beijing.192.168.3.229": true, ssdNode: true}

func mpiJobConfig(name string, workers int, extra string) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "python", "/benchmarks/tf_cnn_benchmarks.py", "--model", "resnet101"]
  worker_count = %[2]d
%[3]s
}
`, name, workers, extra)
}

func mpiJobName() string { return acctest.RandomWithPrefix("tf-acc-mpi") }

// checkMPIPods checks the job's pods in the API: one launcher and workers workers, all Running,
// each passing onNode.
func checkMPIPods(a *api, name string, workers int, onNode func(node string) bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return a.waitPods(jobs.MPI.PodSelector(name), func(pods []corev1.Pod) bool {
			launchers, w := 0, 0
			for _, p := range pods {
				if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || !onNode(p.Spec.NodeName) {
					return false
				}
				switch p.Labels[jobs.JobRoleLabel] {
				case "launcher":
					launchers++
				case "worker":
					w++
				}
			}
			return launchers == 1 && w == workers
		})
	}
}

func TestAccMPIJob_tolerateSSDNode(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: append([]resource.TestStep{
			{
				Config: mpiJobConfig(name, 2, `  gpus = 1
  tolerations = ["ssd_node"]`),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkMPIPods(a, name, 2, func(node string) bool { return node == ssdNode }),
					func(*terraform.State) error {
						for _, p := range a.pods("default", jobs.MPI.PodSelector(name)) {
							want := []corev1.Toleration{{Key: "ssd_node", Operator: corev1.TolerationOpExists}}
							if got := userTolerations(p); fmt.Sprint(got) != fmt.Sprint(want) {
								return fmt.Errorf("pod %s tolerations %v, want %v", p.Name, got, want)
							}
							if p.Labels[jobs.JobRoleLabel] == "worker" {
								if gpus := p.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; gpus.Value() != 1 {
									return fmt.Errorf("worker %s has %s GPUs, want 1", p.Name, gpus.String())
								}
							}
						}
						return nil
					},
				),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("id"), knownvalue.StringExact("default/"+name)),
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("processes_per_worker"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("instances"), knownvalue.ListSizeExact(3)),
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("instances").AtSliceIndex(1).AtMapKey("node"), knownvalue.StringExact(ssdNode)),
				},
			},
			{
				// A second plan of the same config changes nothing.
				Config:           mpiJobConfig(name, 2, "  gpus = 1\n  tolerations = [\"ssd_node\"]"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				ResourceName:      "training_mpi_job.test",
				ImportState:       true,
				ImportStateId:     "default/" + name,
				ImportStateVerify: true,
				// The status is read anew at import time; the training duration has moved on.
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts"},
			},
		}, reimport("training_mpi_job.test", "default/"+name, mpiJobConfig(name, 2, "  gpus = 1\n  tolerations = [\"ssd_node\"]"), plancheck.ExpectEmptyPlan())...),
	})
}

// userTolerations drops the tolerations Kubernetes adds to every pod by default.
func userTolerations(p corev1.Pod) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range p.Spec.Tolerations {
		if t.TolerationSeconds == nil {
			out = append(out, t)
		}
	}
	return out
}

func TestAccMPIJob_tolerateTwoTaints(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	// 3 workers of 4 GPUs cannot fit on one 8-GPU node: the job spreads over the tolerated nodes.
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{{
			Config: mpiJobConfig(name, 3, `  gpus = 4
  tolerations = ["gpu_node", "ssd_node"]`),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkMPIPods(a, name, 3, func(node string) bool { return gpuNodes[node] }),
				func(*terraform.State) error {
					nodes := map[string]bool{}
					for _, p := range a.pods("default", jobs.MPI.PodSelector(name)) {
						if p.Labels[jobs.JobRoleLabel] == "worker" {
							nodes[p.Spec.NodeName] = true
						}
					}
					if len(nodes) < 2 {
						return fmt.Errorf("12 GPUs of workers fit on %d node(s): %v", len(nodes), nodes)
					}
					return nil
				},
			),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("processes_per_worker"), knownvalue.Int64Exact(4)),
			},
		}},
	})
}

func TestAccMPIJob_tolerateAll(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{{
			Config: mpiJobConfig(name, 2, `  tolerations = ["all"]`),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkMPIPods(a, name, 2, func(node string) bool { return node != "" }),
				func(*terraform.State) error {
					for _, p := range a.pods("default", jobs.MPI.PodSelector(name)) {
						want := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
						if got := userTolerations(p); fmt.Sprint(got) != fmt.Sprint(want) {
							return fmt.Errorf("pod %s tolerations %v, want %v", p.Name, got, want)
						}
					}
					return nil
				},
			),
		}},
	})
}

// finishMPIJob ends the job's launcher as a successful mpirun would and waits until mpi-operator
// reports the job succeeded.
func (a *api) finishMPIJob(name string) {
	a.t.Helper()
	a.finishPods(mpiLauncher(name))
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := a.get(jobs.MPI.GVR, "default", name)
		if err != nil {
			return false, err
		}
		s, err := jobs.MPI.Status(jobs.Observed{Object: obj}, time.Now())
		return err == nil && s.Phase == jobs.Succeeded, err
	})
	if err != nil {
		a.t.Fatalf("the MPIJob did not succeed: %v", err)
	}
}

// deleteMPIJobOutside deletes the MPIJob as someone outside Terraform would (its TTL, a person)
// and waits until it is gone.
func deleteMPIJobOutside(t *testing.T, a *api, name string) {
	t.Helper()
	if err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, a, name)
}

func waitGone(t *testing.T, a *api, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := a.get(jobs.MPI.GVR, "default", name)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("MPIJob %s was not deleted: %v", name, err)
	}
}

func TestAccMPIJob_finishedJobRemovedIsNotRerun(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	config := mpiJobConfig(name, 1, `  tolerations = ["ssd_node"]`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// The launcher's mpirun exits 0: the job succeeds, and a refresh records it.
				PreConfig:    func() { a.finishMPIJob(name) },
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("training_mpi_job.test", "status", jobs.Succeeded),
					resource.TestMatchResourceAttr("training_mpi_job.test", "completion_time", regexp.MustCompile(`^\d{4}-`)),
				),
			},
			{
				// Cleaned up after it finished: the plan keeps it (with a warning) instead of re-running it.
				PreConfig: func() {
					deleteMPIJobOutside(t, a, name)
				},
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// A wait that runs out on a job that has not failed is not a broken job: the apply warns with
// the scheduler's reason and keeps the job in state, untainted (the next plan with the same
// configuration is empty, where a tainted job would be replaced).
func TestAccMPIJob_unschedulableWarnsAndStaysUntainted(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	// Every node of the local cluster is tainted: without tolerations nothing can run.
	config := mpiJobConfig(name, 1, `  timeouts {
    create = "5s"
  }`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("training_mpi_job.test", "status", "PENDING"),
					func(*terraform.State) error {
						_, err := a.get(jobs.MPI.GVR, "default", name)
						return err
					},
				),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

func TestNotRunningYetSaysWhyAndWhatHappened(t *testing.T) {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "j-worker-0"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/6 nodes are available: 6 node(s) had untolerated taint {ssd_node: }."}}}}
	msg := notRunningYet(fmt.Errorf("%w after 5s", kube.ErrWaitTimeout), jobs.Observed{Pods: []corev1.Pod{pod}})
	for _, want := range []string{"timed out after 5s", "untolerated taint {ssd_node: }", "not tainted", "timeouts.create"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

// A job asking for more GPUs than any node has is kept, untainted, and the apply's warning, as
// the terraform CLI prints it, quotes the real scheduler's reason.
func TestAccMPIJob_insufficientGPUsWarnsWithSchedulerReason(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	name := mpiJobName()
	w := newWorkspace(t)
	w.write(mpiJobConfig(name, 1, `  gpus = 16
  tolerations = ["ssd_node"]
  timeouts {
    create = "5s"
  }`))
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		if err := checkGone(a, jobs.MPI, name)(nil); err != nil {
			t.Error(err)
		}
	})
	out := w.run("apply", "-auto-approve", "-input=false")
	for _, want := range []string{"Warning:", "Insufficient nvidia.com/gpu", "not tainted"} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("the apply's output does not say %q:\n%s", want, out)
		}
	}
	if show := w.run("state", "show", "training_mpi_job.test"); !strings.Contains(show, `status = "PENDING"`) && !strings.Contains(flat(show), `status = "PENDING"`) {
		t.Errorf("the job is not in state as PENDING:\n%s", show)
	}
	if plan := w.run("plan", "-input=false", "-detailed-exitcode"); !strings.Contains(plan, "No changes") {
		t.Errorf("the plan after the warning is not empty (a tainted job would be replaced):\n%s", plan)
	}
}

// validate and a plan that only creates jobs work with no cluster reachable.
// unreachableKubeconfig is a kubeconfig naming an address nothing listens on.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	unreachable := `apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: gone, context: {cluster: gone, user: u}}]
current-context: gone
`
	if err := os.WriteFile(kubeconfig, []byte(unreachable), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

func TestMPIJob_planWithoutCluster(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	config := fmt.Sprintf(`provider "training" {
  config_path = %q
}
resource "training_mpi_job" "test" {
  name         = "offline"
  image        = "horovod"
  command      = ["mpirun", "true"]
  worker_count = 2
  tolerations  = ["ssd_node"]
}
`, kubeconfig)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:             config,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionCreate),
				plancheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("processes_per_worker"), knownvalue.Int64Exact(1)),
			}},
		}},
	})
}

// A worker's RDMA devices beside its GPUs (extended_resources) are limits of the MPIJob's worker
// template, not of its launcher; the plan after the apply is empty, and an import gives the
// state the apply did, the GPUs told from the RDMA devices.
func TestAccMPIJob_extendedResourcesBesideTheGPUsAreWorkerLimitsAndImportExactly(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	extra := `  gpus               = 2
  extended_resources = { "rdma/hca" = "1", "vpc.amazonaws.com/efa" = "4" }
  tolerations        = ["gpu_node"]
  wait_for           = "created"`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: mpiJobConfig(name, 2, extra),
				Check: func(*terraform.State) error {
					obj, err := a.get(jobs.MPI.GVR, "default", name)
					if err != nil {
						return err
					}
					for role, want := range map[string]map[string]string{
						"Worker":   {"nvidia.com/gpu": "2", "rdma/hca": "1", "vpc.amazonaws.com/efa": "4"},
						"Launcher": {},
					} {
						containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "mpiReplicaSpecs", role, "template", "spec", "containers")
						c, _ := containers[0].(map[string]any)
						got, _, _ := unstructured.NestedStringMap(c, "resources", "limits")
						for name, value := range want {
							if got[name] != value {
								return fmt.Errorf("the %s's limits are %v, want %s = %s", role, got, name, value)
							}
						}
						if role == "Launcher" && (got["rdma/hca"] != "" || got["nvidia.com/gpu"] != "") {
							return fmt.Errorf("the launcher asks for devices: %v", got)
						}
					}
					return nil
				},
			},
			{
				Config:           mpiJobConfig(name, 2, extra),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				ResourceName:      "training_mpi_job.test",
				ImportState:       true,
				ImportStateId:     "default/" + name,
				ImportStateVerify: true,
				// The job was recorded at creation (wait_for = "created"); its status moves on.
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
			},
		},
	})
}

// An init container added to a job's workers with kubectl is a change of its pod_patch, which a
// refresh reads: the plan replaces the job, showing the patch that goes; a configuration that
// says it (in pod_patch, written as the import reads it or otherwise) plans no change, and a
// label change of that job is in place. A replacement of a job that holds nothing more says
// nothing of what it drops; one of a job given a scheduling policy by hand (outside the pod
// templates, which no attribute says) names it.
func TestAccMPIJob_anInitContainerAddedByHandIsPodPatchDriftThatAReplacementShows(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	w := newWorkspace(t)
	config := func(image, labels, extra string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %q
  image        = %q
  command      = ["mpirun", "python", "/train.py"]
  worker_count = 1
  wait_for     = "created"
  labels       = { team = %q }
%s}
`, name, image, labels, extra)
	}
	w.write(config("registry.example/horovod:1", "vision", ""))
	w.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
	w.write(config("registry.example/horovod:2", "vision", ""))
	const warning = "drops what its configuration cannot say"
	if plan := w.run("plan", "-input=false"); strings.Contains(plan, warning) || strings.Contains(plan, "pod_patch") {
		t.Errorf("a replacement of a job that holds nothing more warns or shows a patch:\n%s", plan)
	}
	patch := []byte(`{"spec":{"mpiReplicaSpecs":{"Worker":{"template":{"spec":{"initContainers":[{"name":"fetch","image":"busybox"}]}}}}}}`)
	if _, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Patch(context.Background(), name, k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.write(config("registry.example/horovod:1", "vision", ""))
	plan := w.run("plan", "-input=false")
	if flat := strings.Join(strings.Fields(plan), " "); !strings.Contains(flat, "- pod_patch = { # forces replacement") || !strings.Contains(flat, `name = "fetch"`) ||
		!strings.Contains(flat, "1 to add, 0 to change, 1 to destroy") {
		t.Errorf("the init container added by hand is not a pod_patch change that replaces the job:\n%s", plan)
	}
	says := `  pod_patch = { worker = yamlencode({ spec = { initContainers = [{ name = "fetch", image = "busybox" }] } }) }` + "\n"
	w.write(config("registry.example/horovod:1", "vision", says))
	w.planIsEmpty()
	w.write(config("registry.example/horovod:1", "speech", says))
	if plan := w.run("plan", "-input=false"); strings.Contains(plan, warning) || !strings.Contains(plan, "0 to add, 1 to change, 0 to destroy") {
		t.Errorf("a label change of a job whose patch says its init container is not in place:\n%s", plan)
	}
	// What no attribute says, outside the pod templates, is named by the plan of a replacement.
	policy := []byte(`{"spec":{"runPolicy":{"schedulingPolicy":{"minResources":{"cpu":"4"}}}}}`)
	if _, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Patch(context.Background(), name, k8stypes.MergePatchType, policy, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.write(config("registry.example/horovod:2", "speech", says))
	if flat := strings.Join(strings.Fields(w.run("plan", "-input=false")), " "); !strings.Contains(flat, warning) ||
		!strings.Contains(flat, "spec.runPolicy.schedulingPolicy.minResources") {
		t.Errorf("the replacement does not say it drops the scheduling policy set by hand:\n%s", flat)
	}
	w.run("destroy", "-auto-approve", "-input=false")
	if err := jobGone(a, jobs.MPI, "default", name); err != nil {
		t.Error(err)
	}
}
