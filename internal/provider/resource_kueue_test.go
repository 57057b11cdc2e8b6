package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
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
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// quotaConfig is a ResourceFlavor for the GPU and SSD nodes (their labels, and tolerations of
// their taints, so that jobs need none), a ClusterQueue with gpus GPUs of it and a LocalQueue, all
// named after prefix.
func quotaConfig(prefix string, gpus int, extra string) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_resource_flavor" "gpu" {
  name        = "%[1]s-gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node", "ssd_node"]
}

resource "training_cluster_queue" "team" {
  name = "%[1]s-team"
  resource_group {
    covered_resources = ["cpu", "memory", "nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "cpu"
        nominal_quota = "64"
      }
      resource {
        name          = "memory"
        nominal_quota = "256Gi"
      }
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "%[2]d"
      }
    }
  }
}

resource "training_local_queue" "team" {
  name          = "%[1]s"
  cluster_queue = training_cluster_queue.team.name
}
%[3]s`, prefix, gpus, extra)
}

// queuedJob is a job of the kind that asks for 2 GPUs in all, submitted to the LocalQueue;
// extra goes into its block. The MPI launcher asks for nothing, so Kueue gives it no flavor: it
// tolerates the control-plane nodes itself.
func queuedJob(kind *jobs.Kind, address, name, extra string) string {
	body := map[string]string{
		"mpi":     "  command      = [\"mpirun\", \"hostname\"]\n  worker_count = 2\n  tolerations  = [\"node-role.kubernetes.io/control-plane\"]\n",
		"tf":      "  command      = [\"python\", \"train.py\"]\n  worker_count = 2\n",
		"pytorch": "  command      = [\"python\", \"train.py\"]\n  worker_count = 1\n",
		"train":   "  command      = [\"torchrun\", \"train.py\"]\n  runtime      = \"torch-distributed\"\n  num_nodes    = 2\n",
	}[kind.Name]
	return fmt.Sprintf(`
resource "training_%s_job" %q {
  name       = %q
  image      = "registry.example/train:1"
  gpus       = 1
  queue_name = training_local_queue.team.name
%s%s
}
`, kind.Name, address, name, body, extra)
}

// A quota of 2 GPUs and two jobs of 2 GPUs each: the first runs, the second is QUEUED with
// Kueue's reason naming the GPU quota, the apply succeeds and nothing is tainted (the next plan
// is empty). Destroying the first admits the second, and a refresh shows it running. For MPI,
// a third job then waits until raising the quota in place admits it.
func TestAccKueue_queuedJobsWaitForQuota(t *testing.T) {
	for _, kind := range []*jobs.Kind{jobs.MPI, jobs.TF, jobs.PyTorch, jobs.Train} {
		t.Run(kind.Name, func(t *testing.T) {
			a := newAPI(t)
			t.Parallel()
			nodeTaintsMu.RLock()
			defer nodeTaintsMu.RUnlock()
			prefix := acctest.RandomWithPrefix("tf-acc-q" + kind.Name)
			first, second, third := prefix+"-a", prefix+"-b", prefix+"-c"
			addr := func(n string) string { return "training_" + kind.Name + "_job." + n }
			// The second job's running wait runs out at once: it is queued, and stays so.
			short := "  timeouts {\n    create = \"10s\"\n  }\n"
			both := quotaConfig(prefix, 2, queuedJob(kind, "a", first, "")+queuedJob(kind, "b", second, short+"  depends_on = ["+addr("a")+"]"))
			onlySecond := quotaConfig(prefix, 2, queuedJob(kind, "b", second, short))
			steps := []resource.TestStep{
				{
					Config: both,
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(addr("a"), tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
						statecheck.ExpectKnownValue(addr("a"), tfjsonpath.New("queue_reason"), knownvalue.Null()),
						statecheck.ExpectKnownValue(addr("b"), tfjsonpath.New("status"), knownvalue.StringExact(jobs.Queued)),
						statecheck.ExpectKnownValue(addr("b"), tfjsonpath.New("queue_reason"),
							knownvalue.StringRegexp(regexp.MustCompile(`insufficient unused quota for nvidia.com/gpu in flavor `+prefix+`-gpu, 2 more needed`))),
						statecheck.ExpectKnownValue(addr("b"), tfjsonpath.New("suspend"), knownvalue.Bool(false)),
					},
					Check: checkSuspended(a, kind, second, true),
				},
				{
					// Nothing is tainted, and Kueue's suspend of the queued job is not drift.
					Config:           both,
					ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				},
				{
					// Destroying the first admits the second. (Kueue updates the ClusterQueue's
					// status on its own schedule: the refresh below waits for it.)
					Config: onlySecond,
					Check:  resource.ComposeTestCheckFunc(waitJobRunning(a, kind, second), a.waitAdmittedWorkloads(prefix+"-team", 1)),
				},
				{
					RefreshState: true,
					Check: resource.ComposeTestCheckFunc(
						resource.TestCheckResourceAttr(addr("b"), "status", jobs.Running),
						resource.TestCheckNoResourceAttr(addr("b"), "queue_reason"),
						resource.TestCheckResourceAttr("training_cluster_queue.team", "admitted_workloads", "1"),
						resource.TestCheckResourceAttr("training_cluster_queue.team", "usage."+prefix+"-gpu/nvidia.com/gpu", "2"),
					),
				},
				{Config: onlySecond, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			}
			if kind == jobs.MPI {
				// The third job runs elastic Horovod, which rescales in place without a queue.
				withThird := func(gpus, workers int) string {
					return quotaConfig(prefix, gpus, queuedJob(kind, "b", second, short)+
						strings.Replace(queuedJob(kind, "c", third, "  wait_for = \"admitted\"\n  elastic = {\n    min_workers = 1\n    max_workers = 4\n  }\n"+
							"  timeouts {\n    create = \"5s\"\n    update = \"2m\"\n  }"), "worker_count = 2", fmt.Sprintf("worker_count = %d", workers), 1))
				}
				steps = append(steps,
					resource.TestStep{
						// wait_for = "admitted" runs out: queued, in state, untainted.
						Config: withThird(2, 2),
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(addr("c"), tfjsonpath.New("status"), knownvalue.StringExact(jobs.Queued)),
						},
					},
					resource.TestStep{
						// Raising the quota is an in-place update of the ClusterQueue alone; Kueue
						// admits the waiting job.
						Config: withThird(4, 2),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction("training_cluster_queue.team", plancheck.ResourceActionUpdate),
							plancheck.ExpectResourceAction(addr("c"), plancheck.ResourceActionNoop),
							expectChanges{"training_cluster_queue.team", plancheck.ResourceActionUpdate, []string{"resource_group"}},
						}},
						Check: waitJobRunning(a, kind, third),
					},
					resource.TestStep{
						RefreshState: true,
						Check:        resource.TestCheckResourceAttr(addr("c"), "status", jobs.Running),
					},
					resource.TestStep{
						// A worker_count change of an admitted job is what Kueue makes of it (it
						// evicts the job and queues it again), so the plan says replace, even for
						// elastic Horovod.
						Config: withThird(4, 3),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(addr("c"), plancheck.ResourceActionDestroyBeforeCreate),
						}},
					},
				)
			}
			steps = append(steps,
				resource.TestStep{ResourceName: "training_cluster_queue.team", ImportState: true, ImportStateId: prefix + "-team", ImportStateVerify: true,
					ImportStateVerifyIgnore: []string{"timeouts", "pending_workloads", "reserving_workloads", "admitted_workloads", "usage"}},
				resource.TestStep{ResourceName: "training_local_queue.team", ImportState: true, ImportStateId: "default/" + prefix, ImportStateVerify: true,
					ImportStateVerifyIgnore: []string{"timeouts", "pending_workloads", "reserving_workloads", "admitted_workloads"}},
				resource.TestStep{ResourceName: "training_resource_flavor.gpu", ImportState: true, ImportStateId: prefix + "-gpu", ImportStateVerify: true,
					ImportStateVerifyIgnore: []string{"timeouts"}},
			)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				CheckDestroy: resource.ComposeTestCheckFunc(checkGone(a, kind, first), checkGone(a, kind, second), checkGone(a, kind, third),
					checkQueuesGone(a, prefix)),
				Steps: steps,
			})
		})
	}
}

// A job's queue_name that names no LocalQueue fails the apply before anything is created,
// naming the queues the namespace has.
func TestAccKueue_unknownQueue(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-qx")
	name := prefix + "-job"
	config := quotaConfig(prefix, 1, fmt.Sprintf(`
resource "training_mpi_job" "lost" {
  name         = %q
  image        = "registry.example/train:1"
  command      = ["mpirun", "hostname"]
  worker_count = 1
  queue_name   = "no-such-queue"
  depends_on   = [training_local_queue.team]
}
`, name))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(checkGone(a, jobs.MPI, name), checkQueuesGone(a, prefix)),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: regexp.MustCompile(`(?s)LocalQueue "no-such-queue",\s+which\s+namespace\s+default\s+does\s+not\s+have.*LocalQueues\s+there:.*` + prefix + `.*Nothing\s+was\s+created`),
			Check:       checkGone(a, jobs.MPI, name),
		}},
	})
	if _, err := a.get(jobs.MPI.GVR, "default", name); !apierrors.IsNotFound(err) {
		t.Errorf("the job with an unknown queue was created (err=%v)", err)
	}
}

// In a cohort, a queue with no GPUs of its own borrows another's for a low-priority job; when the
// lender's higher-priority job comes, the lender reclaims its quota by preempting it. The
// preempted job reads QUEUED with the preemption, and the next plan neither replaces nor changes it.
func TestAccKueue_preemptionInCohort(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	prefix := acctest.RandomWithPrefix("tf-acc-qp")
	low, high := a.priorityClass(prefix+"-low", 10), a.priorityClass(prefix+"-high", 1000)
	queues := providerConfig() + fmt.Sprintf(`
resource "training_resource_flavor" "gpu" {
  name        = "%[1]s-gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node", "ssd_node"]
}

resource "training_cluster_queue" "lender" {
  name   = "%[1]s-lender"
  cohort = "%[1]s"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "2"
      }
    }
  }
  preemption {
    reclaim_within_cohort = "LowerPriority"
  }
}

resource "training_cluster_queue" "borrower" {
  name   = "%[1]s-borrower"
  cohort = "%[1]s"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "0"
      }
    }
  }
}

resource "training_local_queue" "lender" {
  name          = "%[1]s-lender"
  cluster_queue = training_cluster_queue.lender.name
}

resource "training_local_queue" "borrower" {
  name          = "%[1]s-borrower"
  cluster_queue = training_cluster_queue.borrower.name
}

resource "training_mpi_job" "low" {
  name                = "%[1]s-low"
  image               = "registry.example/train:1"
  command             = ["mpirun", "hostname"]
  worker_count        = 2
  gpus                = 1
  priority_class_name = %[2]q
  tolerations         = ["node-role.kubernetes.io/control-plane"]
  queue_name          = training_local_queue.borrower.name
}
`, prefix, low)
	highJob := fmt.Sprintf(`
resource "training_mpi_job" "high" {
  name                = "%[1]s-high"
  image               = "registry.example/train:1"
  command             = ["mpirun", "hostname"]
  worker_count        = 2
  gpus                = 1
  priority_class_name = %[2]q
  tolerations         = ["node-role.kubernetes.io/control-plane"]
  queue_name          = training_local_queue.lender.name
}
`, prefix, high)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: resource.ComposeTestCheckFunc(checkGone(a, jobs.MPI, prefix+"-low"), checkGone(a, jobs.MPI, prefix+"-high"),
			checkQueuesGone(a, prefix)),
		Steps: []resource.TestStep{
			{
				Config: queues,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_mpi_job.low", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
				},
			},
			{
				Config: queues + highJob,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_mpi_job.high", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
				},
				Check: checkSuspended(a, jobs.MPI, prefix+"-low", true),
			},
			{
				RefreshState: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("training_mpi_job.low", "status", jobs.Queued),
					resource.TestMatchResourceAttr("training_mpi_job.low", "queue_reason", regexp.MustCompile(`(?i)preempt`)),
				),
			},
			{
				Config:           queues + highJob,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// Plan-time rules of queued jobs.
func TestKueue_planTimeRules(t *testing.T) {
	for name, tc := range map[string]struct{ extra, want string }{
		"suspend":                  {"  queue_name = \"q\"\n  suspend = true", "A queued job is suspended by Kueue"},
		"admitted without a queue": {"  wait_for = \"admitted\"", "Nothing to admit"},
		"blank queue":              {"  queue_name = \" \"", "queue_name"},
	} {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config: fmt.Sprintf(`
resource "training_mpi_job" "x" {
  name         = "x"
  image        = "registry.example/train:1"
  command      = ["mpirun", "hostname"]
  worker_count = 1
%s
}
`, tc.extra),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(regexp.QuoteMeta(tc.want)),
				}},
			})
		})
	}
}

// checkSuspended checks the job object's runPolicy.suspend: Kueue's, for a queued job.
func checkSuspended(a *api, kind *jobs.Kind, name string, want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := a.get(kind.GVR, "default", name)
		if err != nil {
			return err
		}
		spec, _ := obj.Object["spec"].(map[string]any)
		policy, _ := spec["runPolicy"].(map[string]any)
		if kind == jobs.Train {
			policy = spec // a TrainJob's suspend is its spec's
		}
		if got, _ := policy["suspend"].(bool); got != want {
			return fmt.Errorf("%s %s: suspend is %v, want %v", kind.Object, name, got, want)
		}
		return nil
	}
}

// waitJobRunning waits until every pod of the job runs (Kueue admitted it and its operator
// started it) and the job's status, as its operator reports it, says RUNNING.
func waitJobRunning(a *api, kind *jobs.Kind, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var pods []corev1.Pod
		if err := a.waitPods(kind.PodSelector(name), func(list []corev1.Pod) bool {
			pods = list
			for _, p := range list {
				if p.Status.Phase != corev1.PodRunning {
					return false
				}
			}
			return len(list) > 0
		}); err != nil {
			return err
		}
		var phase string
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
			obj, err := a.get(kind.GVR, "default", name)
			if err != nil {
				return false, err
			}
			s, err := kind.Status(jobs.Observed{Object: obj, Pods: pods}, time.Now())
			phase = s.Phase
			return err == nil && s.Phase == jobs.Running, err
		})
		if err != nil {
			return fmt.Errorf("%s %s: its pods run, but its status is %s: %w", kind.Object, name, phase, err)
		}
		return nil
	}
}

// checkQueuesGone checks that destroy removed the flavor and queues named after prefix.
func checkQueuesGone(a *api, prefix string) resource.TestCheckFunc {
	return checkNoneNamed(a, prefix, kueueObject{kueue.ResourceFlavorGVR, ""}, kueueObject{kueue.ClusterQueueGVR, ""},
		kueueObject{kueue.LocalQueueGVR, "default"})
}

// priorityClass makes a PriorityClass for the test, removed when it ends.
func (a *api) priorityClass(name string, value int32) string {
	a.t.Helper()
	ctx := context.Background()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if _, err := a.kube.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() {
		_ = a.kube.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// waitAdmittedWorkloads waits until the ClusterQueue's status counts n admitted workloads.
func (a *api) waitAdmittedWorkloads(clusterQueue string, n int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var last int64
		err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			obj, err := a.get(kueue.ClusterQueueGVR, "", clusterQueue)
			if err != nil {
				return false, err
			}
			last = kueue.ReadQueueStatus(obj).Admitted
			return last == n, nil
		})
		if err != nil {
			return fmt.Errorf("ClusterQueue %s: %d admitted workloads, want %d: %w", clusterQueue, last, n, err)
		}
		return nil
	}
}

// A Topology and a flavor that names it are created as Kueue takes them (the flavor's
// topologyName, the Topology's levels in order), plan empty after the apply, import by name, and
// a change Kueue does not allow in place (the levels; a topology flavor's node labels) is planned
// and applied as a replacement (a new Topology replaces its flavor too, which Kueue's finalizer
// on the Topology needs); destroy removes both.
func TestAccKueue_topologyAndItsFlavor(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-topo")
	config := func(levels, gpuLabel string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_topology" "dc" {
  name   = "%[1]s-dc"
  levels = [%[2]s]
}

resource "training_resource_flavor" "gpu" {
  name          = "%[1]s-gpu"
  node_labels   = { %[3]q = "true" }
  tolerations   = ["gpu_node"]
  topology_name = training_topology.dc.name
  lifecycle {
    replace_triggered_by = [training_topology.dc]
  }
}
`, prefix, levels, gpuLabel)
	}
	threeLevels := `"example.com/block", "example.com/rack", "kubernetes.io/hostname"`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			for _, o := range []struct {
				gvr  schema.GroupVersionResource
				name string
			}{{kueue.TopologyGVR, prefix + "-dc"}, {kueue.ResourceFlavorGVR, prefix + "-gpu"}} {
				if _, err := a.get(o.gvr, "", o.name); err == nil {
					return fmt.Errorf("%s %s is left after destroy", o.gvr.Resource, o.name)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: config(threeLevels, "nvidia.com/gpu.present"), Check: func(*terraform.State) error {
				topology, err := a.get(kueue.TopologyGVR, "", prefix+"-dc")
				if err != nil {
					return err
				}
				spec, err := kueue.ReadTopology(topology)
				if err != nil {
					return err
				}
				if want := []string{"example.com/block", "example.com/rack", "kubernetes.io/hostname"}; !slices.Equal(spec.Levels, want) {
					return fmt.Errorf("the Topology's levels are %q, want %q", spec.Levels, want)
				}
				flavor, err := a.get(kueue.ResourceFlavorGVR, "", prefix+"-gpu")
				if err != nil {
					return err
				}
				if got, _, _ := unstructured.NestedString(flavor.Object, "spec", "topologyName"); got != prefix+"-dc" {
					return fmt.Errorf("the flavor's topologyName is %q", got)
				}
				return nil
			}},
			{Config: config(threeLevels, "nvidia.com/gpu.present"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{ResourceName: "training_topology.dc", ImportState: true, ImportStateId: prefix + "-dc", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			{ResourceName: "training_resource_flavor.gpu", ImportState: true, ImportStateId: prefix + "-gpu", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			{Config: config(threeLevels, "example.com/gpu"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("training_resource_flavor.gpu", plancheck.ResourceActionDestroyBeforeCreate),
				plancheck.ExpectResourceAction("training_topology.dc", plancheck.ResourceActionNoop),
			}}},
			{Config: config(`"example.com/rack", "kubernetes.io/hostname"`, "example.com/gpu"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("training_topology.dc", plancheck.ResourceActionDestroyBeforeCreate),
				plancheck.ExpectResourceAction("training_resource_flavor.gpu", plancheck.ResourceActionDestroyBeforeCreate),
			}}},
		},
	})
}
