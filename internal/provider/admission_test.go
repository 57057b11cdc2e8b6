package provider

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A queue of an admission scenario: a ClusterQueue of the scenario's GPU flavor and its
// LocalQueue, named after it.
type scenarioQueue struct {
	name, gpus, borrowingLimit string
	// inCohort puts it in the scenario's cohort; within and reclaim are its preemption policies.
	inCohort        bool
	within, reclaim string
}

// A job of an admission scenario: an MPI job of workers × 1 GPU (its launcher asks for
// nothing), in a queue, at a priority ("" none, "low", "high"); after names the job it is
// created after (the plan checks it after that one, and Kueue sees it later).
type scenarioJob struct {
	name, queue, priority, after string
	workers                      int
}

// An admission scenario: queues, the jobs that hold quota before the plan, and the jobs the plan
// adds, whose admission is predicted by the plan and then done by Kueue.
type admissionScenario struct {
	name    string
	queues  []scenarioQueue
	holding []scenarioJob
	added   []scenarioJob
}

func (sc admissionScenario) config(prefix string, low, high string, jobsToo []scenarioJob, waitFor string) string {
	var b strings.Builder
	b.WriteString(providerConfig())
	fmt.Fprintf(&b, `
resource "training_resource_flavor" "gpu" {
  name        = "%[1]s-gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node", "ssd_node"]
}
`, prefix)
	for _, q := range sc.queues {
		cohort, limit, preemption := "", "", ""
		if q.inCohort {
			cohort = fmt.Sprintf("  cohort = %q\n", prefix)
		}
		if q.borrowingLimit != "" {
			limit = fmt.Sprintf("        borrowing_limit = %q\n", q.borrowingLimit)
		}
		if q.within != "" || q.reclaim != "" {
			preemption = "  preemption {\n"
			if q.within != "" {
				preemption += fmt.Sprintf("    within_cluster_queue = %q\n", q.within)
			}
			if q.reclaim != "" {
				preemption += fmt.Sprintf("    reclaim_within_cohort = %q\n", q.reclaim)
			}
			preemption += "  }\n"
		}
		fmt.Fprintf(&b, `
resource "training_cluster_queue" %[2]q {
  name = "%[1]s-%[2]s"
%[3]s  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = %[4]q
%[5]s      }
    }
  }
%[6]s}

resource "training_local_queue" %[2]q {
  name          = "%[1]s-%[2]s"
  cluster_queue = training_cluster_queue.%[2]s.name
}
`, prefix, q.name, cohort, q.gpus, limit, preemption)
	}
	for _, j := range jobsToo {
		extra := ""
		switch j.priority {
		case "low":
			extra += fmt.Sprintf("  priority_class_name = %q\n", low)
		case "high":
			extra += fmt.Sprintf("  priority_class_name = %q\n", high)
		}
		if j.after != "" {
			extra += fmt.Sprintf("  depends_on = [training_mpi_job.%s]\n", j.after)
		}
		fmt.Fprintf(&b, `
resource "training_mpi_job" %[2]q {
  name         = "%[1]s-%[2]s"
  image        = "registry.example/train:1"
  command      = ["mpirun", "hostname"]
  worker_count = %[3]d
  gpus         = 1
  tolerations  = ["node-role.kubernetes.io/control-plane"]
  queue_name   = training_local_queue.%[4]s.name
  wait_for     = %[5]q
%[6]s}
`, prefix, j.name, j.workers, j.queue, waitFor, extra)
	}
	return b.String()
}

// admissionScenarios are the scenarios the prediction is proven on: each of what Kueue does
// with a job (admit it, hold it, never admit it, admit it by preempting within its queue or
// reclaiming from its cohort, admit it by borrowing), and jobs of one plan counting against
// each other.
var admissionScenarios = []admissionScenario{
	{name: "fits", queues: []scenarioQueue{{name: "a", gpus: "4"}},
		added: []scenarioJob{{name: "x", queue: "a", workers: 2}}},
	{name: "waits for quota held", queues: []scenarioQueue{{name: "a", gpus: "2"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2}}},
	{name: "never fits", queues: []scenarioQueue{{name: "a", gpus: "2"}},
		added: []scenarioJob{{name: "x", queue: "a", workers: 3}}},
	{name: "preempts a lower priority in its queue", queues: []scenarioQueue{{name: "a", gpus: "2", within: "LowerPriority"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2, priority: "low"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2, priority: "high"}}},
	{name: "does not preempt an equal priority", queues: []scenarioQueue{{name: "a", gpus: "2", within: "LowerPriority"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2, priority: "high"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2, priority: "high"}}},
	{name: "borrows from its cohort", queues: []scenarioQueue{{name: "a", gpus: "2", inCohort: true}, {name: "b", gpus: "2", inCohort: true}},
		added: []scenarioJob{{name: "x", queue: "a", workers: 4}}},
	{name: "within its borrowing limit", queues: []scenarioQueue{{name: "a", gpus: "2", borrowingLimit: "1", inCohort: true}, {name: "b", gpus: "2", inCohort: true}},
		added: []scenarioJob{{name: "x", queue: "a", workers: 4}}},
	{name: "reclaims what its cohort borrowed", queues: []scenarioQueue{{name: "a", gpus: "2", inCohort: true, reclaim: "Any"}, {name: "b", gpus: "2", inCohort: true}},
		holding: []scenarioJob{{name: "h", queue: "b", workers: 4}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2}}},
	{name: "two jobs of one plan", queues: []scenarioQueue{{name: "a", gpus: "2"}},
		added: []scenarioJob{{name: "x", queue: "a", workers: 2}, {name: "y", queue: "a", workers: 2, after: "x"}}},
}

// What the plan predicted for each job, by its resource name: "admit", "admit preempting
// NAME,...", "hold", "never".
func predictedAdmissions(t *testing.T, planJSON string, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(planJSON))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Summary, Detail, Address string
			} `json:"diagnostic"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "diagnostic" || !strings.HasPrefix(line.Diagnostic.Summary, "Kueue would") {
			continue
		}
		name := strings.TrimPrefix(line.Diagnostic.Address, "training_mpi_job.")
		summary := line.Diagnostic.Summary
		switch {
		case strings.Contains(summary, "by preempting"):
			var victims []string
			for _, part := range strings.Split(line.Diagnostic.Detail, "Preempts MPIJob default/"+prefix+"-")[1:] {
				victims = append(victims, strings.Fields(part)[0])
			}
			out[name] = "admit preempting " + strings.Join(victims, ",")
		case strings.Contains(summary, "would admit"):
			out[name] = "admit"
		case strings.Contains(summary, "never"):
			out[name] = "never"
		default:
			out[name] = "hold"
		}
	}
	return out
}

// What Kueue did with each added job once it settled: "admit", "admit preempting NAME,..." (the
// holding jobs whose Workloads it preempted), or "hold" (a job it never admits is held too: the
// plan's "never" is compared as "hold").
func (a *api) kueueAdmissions(t *testing.T, sc admissionScenario, prefix string, predicted map[string]string) map[string]string {
	t.Helper()
	workloadOf := func(name string) *unstructured.Unstructured {
		job, err := a.get(jobs.MPI.GVR, "default", prefix+"-"+name)
		if err != nil {
			return nil
		}
		list, err := a.dyn.Resource(kueue.WorkloadGVR).Namespace("default").List(t.Context(), metav1.ListOptions{LabelSelector: kueue.JobUIDLabel + "=" + string(job.GetUID())})
		if err != nil || len(list.Items) == 0 {
			return nil
		}
		return &list.Items[0]
	}
	reserved := func(wl *unstructured.Unstructured) bool {
		return wl != nil && conditionTrue(wl, "QuotaReserved")
	}
	got := map[string]string{}
	// Kueue has had its time after 15 s (it admits within a second here); 90 s at most.
	start := time.Now()
	for {
		settled := true
		for _, j := range sc.added {
			wl := workloadOf(j.name)
			admitted := reserved(wl)
			if strings.HasPrefix(predicted[j.name], "admit") != admitted {
				settled = false
			}
			got[j.name] = "hold"
			if admitted {
				var victims []string
				for _, h := range sc.holding {
					if hw := workloadOf(h.name); hw != nil && conditionTrue(hw, "Preempted") {
						victims = append(victims, h.name)
					}
				}
				got[j.name] = "admit"
				if len(victims) > 0 {
					got[j.name] = "admit preempting " + strings.Join(victims, ",")
				}
			}
		}
		if settled && time.Since(start) > 15*time.Second || time.Since(start) > 90*time.Second {
			return got
		}
		time.Sleep(2 * time.Second)
	}
}

// The plan's prediction of what Kueue does with each queued job it adds is what Kueue then does,
// in every scenario: admitted at once, held for quota in use, never (held), admitted by
// preempting a lower priority in its queue (and not an equal one), by borrowing from its cohort
// (and not beyond its borrowing limit), by reclaiming what its cohort borrowed, and the second of
// two jobs of one plan held for the quota the first takes.
func TestAccKueue_admissionPredictedAtPlanIsWhatKueueDoes(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	var ran atomic.Int32
	t.Cleanup(func() { t.Logf("%d scenarios ran", ran.Load()) })
	for i, sc := range admissionScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			prefix := fmt.Sprintf("%s-%d", acctest.RandomWithPrefix("tf-acc-qa"), i)
			low, high := a.priorityClass(prefix+"-low", 10), a.priorityClass(prefix+"-high", 1000)
			w := newWorkspace(t)
			w.write(sc.config(prefix, low, high, sc.holding, "admitted"))
			w.run("apply", "-auto-approve", "-input=false")
			t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
			w.write(sc.config(prefix, low, high, append(append([]scenarioJob(nil), sc.holding...), sc.added...), "created"))
			predicted := predictedAdmissions(t, w.run("plan", "-json", "-input=false"), prefix)
			for _, j := range sc.added {
				if predicted[j.name] == "" {
					t.Fatalf("the plan predicted nothing for %s", j.name)
				}
			}
			w.run("apply", "-auto-approve", "-input=false")
			got := a.kueueAdmissions(t, sc, prefix, predicted)
			for _, j := range sc.added {
				want := predicted[j.name]
				if want == "never" {
					want = "hold"
				}
				if got[j.name] != want {
					t.Errorf("%s: the plan predicted %q, Kueue did %q", j.name, predicted[j.name], got[j.name])
				}
			}
			ran.Add(1)
		})
	}
}

// conditionTrue says whether obj's status has the condition of that type True.
func conditionTrue(obj *unstructured.Unstructured, kind string) bool {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == kind && m["status"] == "True" {
			return true
		}
	}
	return false
}

// planDiagnostics are the diagnostics of a plan -json: "SEVERITY: SUMMARY" by resource address
// ("" for none), and each detail after the summary.
func planDiagnostics(t *testing.T, planJSON string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(planJSON))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity, Summary, Detail, Address string
			} `json:"diagnostic"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "diagnostic" {
			continue
		}
		d := line.Diagnostic
		out[d.Address] = append(out[d.Address], d.Severity+": "+d.Summary+": "+d.Detail)
	}
	return out
}

// The Kueue objects of one configuration are checked as a whole at plan, none of them existing
// yet: a LocalQueue that names a ClusterQueue that is nowhere and a ClusterQueue that names a
// flavor that is nowhere are warned of, naming both ends; a job queued in a ClusterQueue the same
// plan creates is predicted against that queue's declared quota (admitted at once, on its
// flavor); a job that queue could never admit (its launcher's CPU, which the GPU-only queue does
// not cover) fails the plan, naming the job, the queue and the resource; and nothing is written.
func TestAccKueue_queuesOfOneConfigurationCheckedAsAWholeAtPlan(t *testing.T) {
	newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-qw")
	proxy, kubeconfig := startProxy(t, apiproxy.Options{})
	queues := fmt.Sprintf(`provider "training" {
  config_path = %[2]q
}

resource "training_resource_flavor" "gpu" {
  name        = "%[1]s-gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node", "ssd_node"]
}

resource "training_cluster_queue" "gpus" {
  name = "%[1]s-gpus"
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
  name          = "%[1]s-team"
  cluster_queue = training_cluster_queue.gpus.name
}

resource "training_cluster_queue" "orphan" {
  name = "%[1]s-orphan"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = "%[1]s-nowhere"
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "4"
      }
    }
  }
}

resource "training_local_queue" "lost" {
  name          = "%[1]s-lost"
  cluster_queue = "%[1]s-no-such-queue"
}
`, prefix, kubeconfig)
	job := func(name, extra string) string {
		return fmt.Sprintf(`
resource "training_mpi_job" %[2]q {
  name         = "%[1]s-%[2]s"
  image        = "registry.example/train:1"
  command      = ["mpirun", "hostname"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["node-role.kubernetes.io/control-plane"]
  queue_name   = training_local_queue.team.name
%[3]s}
`, prefix, name, extra)
	}
	w := newWorkspace(t)
	w.write(queues + job("fits", ""))
	plan := planDiagnostics(t, w.run("plan", "-json", "-input=false"))
	contains := func(address, want string) {
		t.Helper()
		for _, d := range plan[address] {
			if strings.Contains(d, want) {
				return
			}
		}
		t.Errorf("%s: no diagnostic says %q; it has %q", address, want, plan[address])
	}
	contains("training_local_queue.lost", fmt.Sprintf("warning: LocalQueue default/%[1]s-lost names ClusterQueue %[1]s-no-such-queue, which does not exist", prefix))
	contains("training_cluster_queue.orphan", fmt.Sprintf("warning: ClusterQueue %[1]s-orphan names ResourceFlavor %[1]s-nowhere, which does not exist", prefix))
	contains("training_mpi_job.fits", fmt.Sprintf("warning: Kueue would admit MPIJob default/%s-fits at once", prefix))
	contains("training_mpi_job.fits", fmt.Sprintf("nvidia.com/gpu on %s-gpu", prefix))
	for _, address := range []string{"training_resource_flavor.gpu", "training_cluster_queue.gpus", "training_local_queue.team"} {
		if len(plan[address]) > 0 {
			t.Errorf("%s: a sound object is warned of: %q", address, plan[address])
		}
	}

	w.write(queues + job("never", "  launcher_cpu = \"1\"\n"))
	out, err := w.try(nil, "plan", "-input=false")
	if err == nil {
		t.Fatalf("a job its declared queue could never admit was planned:\n%s", out)
	}
	for _, want := range []string{
		fmt.Sprintf("Kueue would never admit MPIJob default/%[1]s-never in ClusterQueue %[1]s-gpus", prefix),
		"resource cpu unavailable in ClusterQueue", "Nothing was created",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the plan's error does not say %q:\n%s", want, out)
		}
	}
	if n := proxy.Writes(); n != 0 {
		t.Errorf("the plans wrote to the API server %d times: %v", n, proxy.Counts())
	}
}
