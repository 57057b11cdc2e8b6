package provider

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A queue of an admission scenario: a ClusterQueue of the scenario's GPU flavor and its
// LocalQueue, named after it.
type scenarioQueue struct {
	name, gpus, borrowingLimit string
	// spot is its quota of GPUs in the scenario's second flavor, tried after the first; "" none.
	spot string
	// inCohort puts it in the scenario's cohort, cohort in one of the scenario's cohorts (by
	// name); within and reclaim are its preemption policies.
	inCohort        bool
	cohort          string
	within, reclaim string
	// weight is its fair_sharing_weight, "" none.
	weight string
}

// A cohort of an admission scenario: a training_cohort with a parent (another of the scenario's,
// by name; "" a root) and its own quota of GPUs in the scenario's GPU flavor, with limits.
type scenarioCohort struct {
	name, parent, gpus, lendingLimit, borrowingLimit string
}

// A job of an admission scenario: an MPI job of workers × 1 GPU (its launcher asks for
// nothing), or with kind "pytorch" a PyTorchJob of a master and workers-1 workers of 1 GPU each,
// in a queue, at a priority ("" none, "low", "high") of its pods, of its run policy's scheduling
// policy (policyPriority) or of its launcher's pods (launcherPriority); after names the job it is
// created after (the plan checks it after that one, and Kueue sees it later).
type scenarioJob struct {
	name, queue, priority, after, kind string
	policyPriority, launcherPriority   string
	// urgent gives it the scenario's WorkloadPriorityClass (value 5000).
	urgent  bool
	workers int
}

// resourceType is the job's resource type; kind its jobs.Kind.
func (j scenarioJob) resourceType() string {
	if j.kind == "pytorch" {
		return "training_pytorch_job"
	}
	return "training_mpi_job"
}

func (j scenarioJob) jobKind() *jobs.Kind {
	if j.kind == "pytorch" {
		return jobs.PyTorch
	}
	return jobs.MPI
}

// An admission scenario: queues, the jobs that hold quota before the plan, and the jobs the plan
// adds, whose admission is predicted by the plan and then done by Kueue.
type admissionScenario struct {
	name    string
	cohorts []scenarioCohort
	queues  []scenarioQueue
	holding []scenarioJob
	added   []scenarioJob
	// want is, for some added jobs, a pattern of what the plan must predict (and Kueue then do):
	// the rule the scenario is about, not only that the two agree.
	want map[string]string
	// fairSharing runs it on the cluster whose Kueue shares fairly (clustertest.KueueOtherwise).
	fairSharing bool
	// gated names a cohort of the scenario whose quota is 0 while the added jobs are created,
	// and given back once they all wait: Kueue then takes them in one scheduling cycle, as the
	// plan predicts them, not one by one as they come.
	gated string
	// closed: the gated cohort is written without quota; provider: the provider block ("" the
	// tests' cluster's).
	closed   bool
	provider string
}

// config is the scenario's flavors and queues (unless jobsOnly) and jobsToo; with jobsOnly the
// jobs name their LocalQueue as a literal, the queues being another configuration's.
func (sc admissionScenario) config(prefix string, low, high string, jobsToo []scenarioJob, waitFor string, jobsOnly bool) string {
	var b strings.Builder
	b.WriteString(cmp.Or(sc.provider, providerConfig()))
	if !jobsOnly {
		sc.queuesConfig(&b, prefix)
	}
	queueName := func(q string) string {
		if jobsOnly {
			return fmt.Sprintf("%q", prefix+"-"+q)
		}
		return "training_local_queue." + q + ".name"
	}
	for _, j := range jobsToo {
		extra := ""
		class := map[string]string{"low": low, "high": high}
		if j.priority != "" {
			extra += fmt.Sprintf("  priority_class_name = %q\n", class[j.priority])
		}
		if j.policyPriority != "" {
			extra += fmt.Sprintf("  gang_scheduling = { priority_class_name = %q }\n", class[j.policyPriority])
		}
		if j.urgent {
			extra += fmt.Sprintf("  workload_priority_class = %q\n", prefix+"-urgent")
		}
		if j.launcherPriority != "" {
			extra += fmt.Sprintf("  roles = { launcher = { priority_class_name = %q } }\n", class[j.launcherPriority])
		}
		if j.after != "" {
			for _, other := range jobsToo {
				if other.name == j.after {
					extra += fmt.Sprintf("  depends_on = [%s.%s]\n", other.resourceType(), other.name)
				}
			}
		}
		command, workers := `["mpirun", "hostname"]`, j.workers
		if j.kind == "pytorch" {
			command, workers = `["torchrun", "train.py"]`, j.workers-1
		}
		fmt.Fprintf(&b, `
resource %[8]q %[2]q {
  name         = "%[1]s-%[2]s"
  image        = "registry.example/train:1"
  command      = %[7]s
  worker_count = %[3]d
  gpus         = 1
  tolerations  = ["node-role.kubernetes.io/control-plane"]
  queue_name   = %[4]s
  wait_for     = %[5]q
%[6]s}
`, prefix, j.name, workers, queueName(j.queue), waitFor, extra, command, j.resourceType())
	}
	return b.String()
}

// queuesConfig writes the scenario's flavors, ClusterQueues and LocalQueues (its gated cohort
// without quota while closed).
func (sc admissionScenario) queuesConfig(b *strings.Builder, prefix string) {
	fmt.Fprintf(b, `
resource "training_resource_flavor" "gpu" {
  name        = "%[1]s-gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node", "ssd_node"]
}

resource "training_resource_flavor" "spot" {
  name        = "%[1]s-spot"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node", "ssd_node"]
}
`, prefix)
	fmt.Fprintf(b, `
resource "training_workload_priority_class" "urgent" {
  name  = "%[1]s-urgent"
  value = 5000
}
`, prefix)
	for _, c := range sc.cohorts {
		parent, quota := "", ""
		if c.parent != "" {
			parent = fmt.Sprintf("  parent = training_cohort.%s.name\n", c.parent)
		}
		gpus := c.gpus
		if sc.closed && c.name == sc.gated {
			gpus = "0"
		}
		if gpus != "" {
			limits := ""
			if c.lendingLimit != "" {
				limits += fmt.Sprintf("        lending_limit = %q\n", c.lendingLimit)
			}
			if c.borrowingLimit != "" {
				limits += fmt.Sprintf("        borrowing_limit = %q\n", c.borrowingLimit)
			}
			quota = fmt.Sprintf(`  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = %q
%s      }
    }
  }
`, gpus, limits)
		}
		fmt.Fprintf(b, `
resource "training_cohort" %[2]q {
  name = "%[1]s-%[2]s"
%[3]s%[4]s}
`, prefix, c.name, parent, quota)
	}
	for _, q := range sc.queues {
		cohort, limit, preemption := "", "", ""
		if q.inCohort {
			cohort = fmt.Sprintf("  cohort = %q\n", prefix)
		}
		if q.cohort != "" {
			cohort = fmt.Sprintf("  cohort = training_cohort.%s.name\n", q.cohort)
		}
		if q.borrowingLimit != "" {
			limit = fmt.Sprintf("        borrowing_limit = %q\n", q.borrowingLimit)
		}
		spot := ""
		if q.spot != "" {
			spot = fmt.Sprintf(`    flavor {
      name = training_resource_flavor.spot.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = %q
      }
    }
`, q.spot)
		}
		if q.weight != "" {
			cohort += fmt.Sprintf("  fair_sharing_weight = %q\n", q.weight)
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
		fmt.Fprintf(b, `
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
%[7]s  }
%[6]s}

resource "training_local_queue" %[2]q {
  name          = "%[1]s-%[2]s"
  cluster_queue = training_cluster_queue.%[2]s.name
}
`, prefix, q.name, cohort, q.gpus, limit, preemption, spot)
	}
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
	{name: "the second flavor when the first is used", queues: []scenarioQueue{{name: "a", gpus: "2", spot: "4"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 3}}},
	{name: "PyTorchJobs beside an MPIJob", queues: []scenarioQueue{{name: "a", gpus: "4"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2, kind: "pytorch"}, {name: "y", queue: "a", workers: 2, kind: "pytorch", after: "x"}}},
	{name: "a PyTorchJob preempts a lower-priority MPIJob", queues: []scenarioQueue{{name: "a", gpus: "3", within: "LowerPriority"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2, priority: "low"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 3, kind: "pytorch", priority: "high"}}},
	// Kueue reads the run policy's priority class before the pods'.
	{name: "the scheduling policy's priority preempts", queues: []scenarioQueue{{name: "a", gpus: "2", within: "LowerPriority"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2, priority: "low"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2, priority: "low", policyPriority: "high"}}},
	// Kueue reads an MPIJob's launcher's priority class before its workers'.
	// A WorkloadPriorityClass is the job's priority in Kueue, above its pods' PriorityClass.
	{name: "a WorkloadPriorityClass beats a PriorityClass", queues: []scenarioQueue{{name: "a", gpus: "2", within: "LowerPriority"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2, priority: "high"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2, priority: "low", urgent: true}},
		want:    map[string]string{"x": "^admit .* preempting h$"}},
	// Cohort trees: a queue borrows through two levels, what each level holds and lends.
	{name: "borrows through two levels of cohorts",
		cohorts: []scenarioCohort{{name: "org", gpus: "2"}, {name: "dept", parent: "org", gpus: "1"}},
		queues:  []scenarioQueue{{name: "a", gpus: "1", cohort: "dept"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 4}},
		want:    map[string]string{"x": "^admit"}},
	{name: "a cohort lends its parent no more than its lending limit",
		cohorts: []scenarioCohort{{name: "org"}, {name: "lender", parent: "org", gpus: "2", lendingLimit: "1"}, {name: "dept", parent: "org"}},
		queues:  []scenarioQueue{{name: "a", gpus: "1", cohort: "dept"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2}, {name: "y", queue: "a", workers: 3, after: "x"}},
		want:    map[string]string{"x": "^admit", "y": "^never$"}},
	{name: "a cohort borrows no more than its borrowing limit",
		cohorts: []scenarioCohort{{name: "org", gpus: "4"}, {name: "dept", parent: "org", gpus: "0", borrowingLimit: "1"}},
		queues:  []scenarioQueue{{name: "a", gpus: "1", cohort: "dept"}, {name: "b", gpus: "1", cohort: "dept"}},
		holding: []scenarioJob{{name: "h", queue: "b", workers: 1}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2}, {name: "y", queue: "a", workers: 3, after: "x"}},
		want:    map[string]string{"x": "^admit", "y": "^hold$"}},
	{name: "the launcher's priority is the job's", queues: []scenarioQueue{{name: "a", gpus: "2", within: "LowerPriority"}},
		holding: []scenarioJob{{name: "h", queue: "a", workers: 2, priority: "low"}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2, priority: "low", launcherPriority: "high"}}},
	// Fair sharing, where Kueue's configuration turns it on: of two borrowers, the one whose
	// queue's share would be lower goes first, though of lower priority (classically, the higher
	// priority would); a borrowing queue preempts a queue that borrows more (classically, it could
	// not). The winner is planned first: a job's prediction counts the jobs planned before it.
	{name: "fair sharing chooses between two borrowers by weight", fairSharing: true, gated: "org",
		cohorts: []scenarioCohort{{name: "org", gpus: "4"}},
		queues:  []scenarioQueue{{name: "a", gpus: "0", cohort: "org"}, {name: "b", gpus: "0", cohort: "org", weight: "2"}},
		added:   []scenarioJob{{name: "y", queue: "b", workers: 3}, {name: "x", queue: "a", workers: 3, priority: "high", after: "y"}},
		want:    map[string]string{"x": "^hold$", "y": "^admit"}},
	{name: "fair sharing preempts the greater borrower", fairSharing: true,
		queues: []scenarioQueue{{name: "a", gpus: "1", inCohort: true, reclaim: "Any"}, {name: "b", gpus: "1", inCohort: true},
			{name: "c", gpus: "2", inCohort: true}},
		holding: []scenarioJob{{name: "h", queue: "b", workers: 3}},
		added:   []scenarioJob{{name: "x", queue: "a", workers: 2}},
		want:    map[string]string{"x": "^admit .* preempting h$"}},
}

// inCohort says whether the scenario's queue is in its cohort.
func (sc admissionScenario) inCohort(queue string) bool {
	for _, q := range sc.queues {
		if q.name == queue {
			return q.inCohort || q.cohort != ""
		}
	}
	return false
}

// gpuFlavorIn is the flavor of nvidia.com/gpu in a plan's admission detail ("... nvidia.com/gpu
// on FLAVOR ..."), "" for none.
var gpuFlavorIn = regexp.MustCompile(`nvidia\.com/gpu on ([a-z0-9-]+)`)

// victimsIn are the names (without the scenario's prefix) of the jobs a plan's admission detail
// says are preempted.
func victimsIn(detail, prefix string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`Preempts \w+ default/`+regexp.QuoteMeta(prefix)+`-(\S+) `).FindAllStringSubmatch(detail, -1) {
		out = append(out, m[1])
	}
	return out
}

// admissionOf is how an admission is compared: "admit on FLAVOR", then " preempting A,B" when
// it preempts.
func admissionOf(flavor string, victims []string) string {
	out := "admit on " + flavor
	if len(victims) > 0 {
		slices.Sort(victims)
		out += " preempting " + strings.Join(victims, ",")
	}
	return out
}

// What the plan predicted for each job, by its resource name: "admit on FLAVOR" (its GPUs'
// flavor, with " preempting NAME,..." when it preempts), "hold", "never".
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
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "diagnostic" ||
			!strings.HasPrefix(line.Diagnostic.Summary, "Kueue would") && !strings.HasPrefix(line.Diagnostic.Summary, "Kueue may") {
			continue
		}
		name := line.Diagnostic.Address[strings.LastIndex(line.Diagnostic.Address, ".")+1:]
		summary := line.Diagnostic.Summary
		switch {
		case strings.Contains(summary, "would admit") || strings.Contains(summary, "may admit"):
			var flavor string
			if m := gpuFlavorIn.FindStringSubmatch(line.Diagnostic.Detail); m != nil {
				flavor = m[1]
			}
			out[name] = admissionOf(flavor, victimsIn(line.Diagnostic.Detail, prefix))
		case strings.Contains(summary, "never"):
			out[name] = "never"
		default:
			out[name] = "hold"
		}
	}
	return out
}

// What Kueue did with each added job once it settled: "admit on FLAVOR" (the flavor its Workload's
// admission gives nvidia.com/gpu), with " preempting NAME,..." (the holding jobs whose Workloads
// it preempted), or "hold" (a job it never admits is held too: the plan's "never" is compared as
// "hold").
func (a *api) kueueAdmissions(t *testing.T, sc admissionScenario, prefix string, predicted map[string]string) map[string]string {
	t.Helper()
	kinds := map[string]*jobs.Kind{}
	for _, j := range append(append([]scenarioJob(nil), sc.holding...), sc.added...) {
		kinds[j.name] = j.jobKind()
	}
	workloadOf := func(name string) *unstructured.Unstructured {
		return a.workloadOf(kinds[name], prefix+"-"+name)
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
				got[j.name] = admissionOf(gpuFlavorOf(wl), victims)
			}
		}
		if settled && time.Since(start) > 15*time.Second || time.Since(start) > 90*time.Second {
			return got
		}
		time.Sleep(2 * time.Second)
	}
}

// The plan's prediction of what Kueue does with each queued job it adds is what Kueue then does
// (admitted or not, on which flavor, preempting whom), in every scenario: admitted at once, held
// for quota in use, never (held), admitted by preempting a lower priority in its queue (and not an
// equal one), by borrowing from its cohort (and not beyond its borrowing limit), by reclaiming
// what its cohort borrowed, the second of two jobs of one plan held for the quota the first
// takes, on the second flavor when the first is used, PyTorchJobs (a master and workers) beside
// and preempting MPIJobs, a priority given by the run policy's scheduling policy, by the
// launcher's pods or by a WorkloadPriorityClass over the pods' PriorityClass, cohort trees two
// levels deep (borrowing through both levels, within a cohort's lending and borrowing limits),
// and, on a Kueue that shares fairly, the borrower of lower share first (before one of higher
// priority) and a borrower preempting one that borrows more.
func TestAccKueue_admissionPredictedAtPlanIsWhatKueueDoes(t *testing.T) {
	ours := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	var ran atomic.Int32
	t.Cleanup(func() { t.Logf("%d scenarios ran", ran.Load()) })
	for i, sc := range admissionScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			a := ours
			if sc.fairSharing {
				kubeconfig, err := clustertest.KueueOtherwise()
				if err != nil {
					t.Fatal(err)
				}
				a, sc.provider = newAPIAt(t, kubeconfig), fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig)
				otherKueueConfig.RLock() // the provider reads that Kueue's configuration
				defer otherKueueConfig.RUnlock()
			}
			prefix := fmt.Sprintf("%s-%d", acctest.RandomWithPrefix("tf-acc-qa"), i)
			low, high := a.priorityClass(prefix+"-low", 10), a.priorityClass(prefix+"-high", 1000)
			config := func(jobsToo []scenarioJob, waitFor string, jobsOnly bool) string {
				return sc.config(prefix, low, high, jobsToo, waitFor, jobsOnly)
			}
			// The queues and the jobs that hold quota before; the jobs added, in a configuration of
			// their own that names the queues (the plan reads them from the cluster).
			queues := newWorkspace(t)
			queues.write(config(sc.holding, "admitted", false))
			queues.run("apply", "-auto-approve", "-input=false")
			t.Cleanup(func() { _, _ = queues.try(nil, "destroy", "-auto-approve", "-input=false") })
			added := newWorkspace(t)
			added.write(config(sc.added, "created", true))
			t.Cleanup(func() { _, _ = added.try(nil, "destroy", "-auto-approve", "-input=false") })
			predicted := predictedAdmissions(t, added.run("plan", "-json", "-input=false"), prefix)
			for _, j := range sc.added {
				if predicted[j.name] == "" {
					t.Fatalf("the plan predicted nothing for %s", j.name)
				}
				if want := sc.want[j.name]; want != "" && !regexp.MustCompile(want).MatchString(predicted[j.name]) {
					t.Errorf("%s: the plan predicted %q; the scenario is about %q", j.name, predicted[j.name], want)
				}
			}
			// The same jobs added to the configuration that declares their queues are predicted
			// alike, or (only a job predicted never) fail that plan as never admissible.
			queues.write(config(append(append([]scenarioJob(nil), sc.holding...), sc.added...), "created", false))
			out, _ := queues.try(nil, "plan", "-json", "-input=false")
			declared := predictedAdmissions(t, out, prefix)
			for _, j := range sc.added {
				never := strings.Contains(out, "Kueue would never admit "+j.jobKind().Object+" default/"+prefix+"-"+j.name+" in ClusterQueue")
				switch {
				case never && predicted[j.name] != "never":
					t.Errorf("%s: predicted %q, yet the plan of the configuration declaring its queue failed on it as never admissible", j.name, predicted[j.name])
				case never:
					// certain from the declared queue (no cohort to lend it more): the plan fails
				case predicted[j.name] == "never" && !sc.inCohort(j.queue):
					t.Errorf("%s: never admissible by a declared queue without a cohort, yet that configuration's plan did not fail on it", j.name)
				case declared[j.name] != predicted[j.name]:
					t.Errorf("%s: predicted %q with the queues read from the cluster, %q with them declared", j.name, predicted[j.name], declared[j.name])
				}
			}
			if sc.gated != "" {
				shut := sc
				shut.closed = true
				queues.write(shut.config(prefix, low, high, sc.holding, "admitted", false))
				queues.run("apply", "-auto-approve", "-input=false")
				added.run("apply", "-auto-approve", "-input=false")
				a.allWait(t, sc, prefix)
				queues.write(config(sc.holding, "admitted", false))
				queues.run("apply", "-auto-approve", "-input=false")
			} else {
				queues.write(config(sc.holding, "admitted", false))
				added.run("apply", "-auto-approve", "-input=false")
			}
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

// workloadOf is the Workload Kueue made for the job of that kind and name in the default
// namespace; nil while there is none (or it cannot be read).
func (a *api) workloadOf(kind *jobs.Kind, name string) *unstructured.Unstructured {
	job, err := a.get(kind.GVR, "default", name)
	if err != nil {
		return nil
	}
	list, err := a.dyn.Resource(kueue.WorkloadGVR).Namespace("default").List(context.Background(), metav1.ListOptions{LabelSelector: kueue.JobUIDLabel + "=" + string(job.GetUID())})
	if err != nil || len(list.Items) == 0 {
		return nil
	}
	return &list.Items[0]
}

// gpuFlavorOf is the flavor a Workload's admission gives nvidia.com/gpu, "" for none.
func gpuFlavorOf(wl *unstructured.Unstructured) string {
	sets, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	for _, ps := range sets {
		if m, ok := ps.(map[string]any); ok {
			if f, _, _ := unstructured.NestedString(m, "flavors", "nvidia.com/gpu"); f != "" {
				return f
			}
		}
	}
	return ""
}

// allWait waits until Kueue has tried every added job of a gated scenario and holds each (its
// Workload's QuotaReserved condition False); 90 s at most.
func (a *api) allWait(t *testing.T, sc admissionScenario, prefix string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(time.Second) {
		waiting := 0
		for _, j := range sc.added {
			wl := a.workloadOf(j.jobKind(), prefix+"-"+j.name)
			if wl == nil {
				continue
			}
			conditions, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
			for _, c := range conditions {
				if m, ok := c.(map[string]any); ok && m["type"] == "QuotaReserved" && m["status"] == "False" {
					waiting++
				}
			}
		}
		if waiting == len(sc.added) {
			return
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("%d of the %d added jobs wait in Kueue after 90 s with cohort %s closed; all should", waiting, len(sc.added), sc.gated)
		}
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
// flavor), and says the GPUs the plan's queued jobs ask for up to it beside the queue's free
// quota; a job that queue could never admit (its launcher's CPU, which the GPU-only queue does
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
	w.write(queues + job("fits", "") + job("next", "  depends_on = [training_mpi_job.fits]\n"))
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
	// The devices asked for so far, beside the queue's free quota: the second job's plan says the
	// whole plan's.
	contains("training_mpi_job.fits", fmt.Sprintf("up to this one: ClusterQueue %s-gpus: 2 nvidia.com/gpu (4 free now); in all: 2 nvidia.com/gpu.", prefix))
	contains("training_mpi_job.next", fmt.Sprintf("Kueue would admit MPIJob default/%s-next at once", prefix))
	contains("training_mpi_job.next", fmt.Sprintf("up to this one: ClusterQueue %s-gpus: 4 nvidia.com/gpu (4 free now); in all: 4 nvidia.com/gpu.", prefix))
	for _, address := range []string{"training_resource_flavor.gpu", "training_cluster_queue.gpus", "training_local_queue.team"} {
		if len(plan[address]) > 0 {
			t.Errorf("%s: a sound object is warned of: %q", address, plan[address])
		}
	}

	w.write(queues + job("never", "  roles = { launcher = { cpu = \"1\" } }\n"))
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

// The apply creates a plan's queued jobs in parallel, and Kueue takes jobs of equal priority in
// the order their Workloads were made: a prediction that the other order would change says so,
// and one that no order changes (a higher priority, a queue of room for both, no sibling) does
// not.
func TestAPredictionThatTheApplysOrderDecidesSaysSo(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	queue := kueue.ClusterQueueSpec{Name: "team", ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []string{"nvidia.com/gpu"},
		Flavors: []kueue.FlavorQuotas{{Name: "gpu", Resources: []kueue.Quota{{Name: "nvidia.com/gpu", Nominal: "2"}}}}}}}
	job := func(name string, gpus, priority int32, created time.Time) *kueue.Workload {
		return &kueue.Workload{Key: "default/" + name, UID: "planned:" + name, Queue: "team", Priority: priority, Created: created,
			PodSets: []kueue.PodSet{{Name: "worker", Count: int64(gpus), Requests: map[string]int64{"nvidia.com/gpu": 1}}}}
	}
	for _, tc := range []struct {
		name    string
		planned []*kueue.Workload
		decides bool
	}{
		{"alone", []*kueue.Workload{job("x", 2, 0, now)}, false},
		{"second of two that cannot both fit", []*kueue.Workload{job("x", 2, 0, now), job("y", 2, 0, now.Add(time.Second))}, true},
		{"second of two that both fit", []*kueue.Workload{job("x", 1, 0, now), job("y", 1, 0, now.Add(time.Second))}, false},
		{"second, of a higher priority", []*kueue.Workload{job("x", 2, 0, now), job("y", 2, 100, now.Add(time.Second))}, false},
	} {
		snapshot, err := kueue.NewSnapshot(now, []kueue.FlavorSpec{{Name: "gpu"}}, []kueue.ClusterQueueSpec{queue}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		predictions := snapshot.Predict(tc.planned)
		p := predictions[len(predictions)-1]
		decides := orderDecides(snapshot, nil, tc.planned, p)
		if decides != tc.decides {
			t.Errorf("%s: the order decides %v, want %v (predicted %+v)", tc.name, decides, tc.decides, p)
		}
		said := caveats(admissionPrediction{queue: "team", orderDecides: decides})
		if strings.Contains(said, "depends on the order") != tc.decides {
			t.Errorf("%s: the prediction says %q", tc.name, said)
		}
	}
	// What it could not read, Kueue's configuration among it, it says.
	said := caveats(admissionPrediction{queue: "team", unknown: []string{"Kueue's configuration (it cannot be read)"}})
	if !strings.Contains(said, "Not known to the prediction: Kueue's configuration (it cannot be read).") {
		t.Errorf("the prediction does not say what it could not read: %q", said)
	}
}

// A job's priority is the one Kueue gives its Workload: its WorkloadPriorityClass, else the
// PriorityClass Kueue reads (an MPIJob's launcher's before its workers'), else the lowest global
// default; a class that does not exist means Kueue makes no Workload, which the plan says, unless
// the plan makes it.
func TestJobPriorityIsKueues(t *testing.T) {
	state := &kube.QueueState{PriorityClasses: map[string]int32{"low": 10, "high": 1000}, DefaultPriority: 5,
		WorkloadPriorityClasses: map[string]int32{"urgent": 5000}}
	declared := kueue.NewDeclared()
	declared.PriorityClass(kueue.WorkloadPriorityClassSpec{Name: "planned", Value: 7})
	build := func(launcher, workers, wpc string) *unstructured.Unstructured {
		s := jobs.MPIJobSpec{Name: "j", Namespace: "default", Workers: 1, Pod: jobs.PodOptions{Image: "i", PriorityClassName: workers}}
		if launcher != "" {
			s.Pod.Roles = map[string]jobs.RoleOptions{"launcher": {PriorityClassName: launcher}}
		}
		obj, _, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		if wpc != "" {
			obj.SetLabels(map[string]string{"kueue.x-k8s.io/priority-class": wpc})
		}
		return obj
	}
	for _, tc := range []struct {
		name       string
		obj        *unstructured.Unstructured
		want       int32
		noWorkload string
	}{
		{"the launcher's class before the workers'", build("high", "low", ""), 1000, ""},
		{"the workers' class", build("", "low", ""), 10, ""},
		{"no class: the global default", build("", "", ""), 5, ""},
		{"a WorkloadPriorityClass first", build("high", "low", "urgent"), 5000, ""},
		{"a PriorityClass that does not exist", build("", "missing", ""), 0, "PriorityClass missing does not exist"},
		{"a WorkloadPriorityClass that does not exist", build("", "", "gone"), 0, "WorkloadPriorityClass gone"},
		{"a WorkloadPriorityClass the plan makes", build("", "", "planned"), 7, ""},
	} {
		got, noWorkload := jobPriority(state, declared, jobs.MPI, tc.obj, nil)
		if got != tc.want || (noWorkload == "") != (tc.noWorkload == "") || !strings.Contains(noWorkload, tc.noWorkload) {
			t.Errorf("%s: priority %d (%q), want %d (%q)", tc.name, got, noWorkload, tc.want, tc.noWorkload)
		}
	}
}

// What Kueue reads beside the queues is what the plan predicts with, each proven by what Kueue
// then does: a ClusterQueue whose namespace selector has expressions (which the provider's own
// resource cannot say) admits a job of a namespace it selects, by its quota; one that does not
// select the namespace holds the job with Kueue's words; the namespace's LimitRange gives pods
// that ask for no CPU its default request, so a job of more pods than the queue's CPU holds is
// held; and a RuntimeClass's overhead counts on the pods that name it.
func TestAccKueue_namespaceSelectorsLimitRangesAndOverheadPredictedAsKueueDoes(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	ctx := context.Background()
	prefix := acctest.RandomWithPrefix("tf-acc-qsel")
	ns := a.namespace(prefix, map[string]string{"team": "vision"})
	limitRange := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{"cpu": resource.MustParse("2")}, DefaultRequest: corev1.ResourceList{"cpu": resource.MustParse("2")}}}}}
	if _, err := a.kube.CoreV1().LimitRanges(ns).Create(ctx, limitRange, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	runtimeClass := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: prefix}, Handler: "runc",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{"cpu": resource.MustParse("1")}}}
	if _, err := a.kube.NodeV1().RuntimeClasses().Create(ctx, runtimeClass, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.kube.NodeV1().RuntimeClasses().Delete(ctx, prefix, metav1.DeleteOptions{}) })
	create := func(gvr schema.GroupVersionResource, namespace string, obj map[string]any) {
		t.Helper()
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(kueue.Group + "/" + kueue.Version)
		if _, err := a.dyn.Resource(gvr).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.dyn.Resource(gvr).Namespace(namespace).Delete(ctx, u.GetName(), metav1.DeleteOptions{}) })
	}
	create(kueue.ResourceFlavorGVR, "", map[string]any{"kind": "ResourceFlavor", "metadata": map[string]any{"name": prefix}})
	// Each queue: CPU for 2 pods of 2 CPUs and a half, GPUs aplenty.
	queue := func(name string, selector map[string]any) {
		create(kueue.ClusterQueueGVR, "", map[string]any{"kind": "ClusterQueue", "metadata": map[string]any{"name": prefix + "-" + name},
			"spec": map[string]any{"namespaceSelector": selector, "resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "nvidia.com/gpu"}, "flavors": []any{map[string]any{"name": prefix, "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": "4500m"}, map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "16"}}}}}}}})
		create(kueue.LocalQueueGVR, ns, map[string]any{"kind": "LocalQueue", "metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"clusterQueue": prefix + "-" + name}})
	}
	in := map[string]any{"matchExpressions": []any{map[string]any{"key": "team", "operator": "In", "values": []any{"vision", "speech"}}}}
	out := map[string]any{"matchExpressions": []any{map[string]any{"key": "team", "operator": "NotIn", "values": []any{"vision"}}}}
	queue("in", in)
	queue("out", out)
	queue("overhead", in)
	queue("more", in)
	job := func(name, queue string, workers int, extra string) string {
		return fmt.Sprintf(`
resource "training_mpi_job" %[1]q {
  name         = %[1]q
  namespace    = %[2]q
  image        = "registry.example/train:1"
  command      = ["mpirun", "hostname"]
  worker_count = %[4]d
  gpus         = 1
  tolerations  = ["node-role.kubernetes.io/control-plane", "gpu_node", "ssd_node"]
  queue_name   = %[3]q
  wait_for     = "created"
%[5]s}
`, name, ns, queue, workers, extra)
	}
	w := newWorkspace(t)
	// fits: a launcher and a worker of 2 CPUs each (the LimitRange's); more: 3 pods of 2, past
	// the queue's 4.5; elsewhere: a queue that does not select the namespace; overhead: the
	// worker's RuntimeClass adds 1 CPU, past 4.5.
	w.write(providerConfig() + job("fits", "in", 1, "") + job("more", "more", 2, "") + job("elsewhere", "out", 1, "") +
		job("overhead", "overhead", 1, fmt.Sprintf("  pod_patch = { worker = yamlencode({ spec = { runtimeClassName = %q } }) }\n", prefix)))
	t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
	plan := w.run("plan", "-json", "-input=false")
	predicted := predictedAdmissions(t, plan, ns)
	want := map[string]string{"fits": "admit", "more": "never", "elsewhere": "never", "overhead": "never"}
	for name, w := range want {
		if !strings.HasPrefix(predicted[name], w) {
			t.Errorf("%s: the plan predicted %q, want %q:\n%v", name, predicted[name], w, planDiagnostics(t, plan))
		}
	}
	if said := fmt.Sprint(planDiagnostics(t, plan)["training_mpi_job.elsewhere"]); !strings.Contains(said, kueue.NamespaceMismatchOf(testKueueRelease())) {
		t.Errorf("the plan of the job its queue does not take from its namespace does not say so in Kueue's words: %s", said)
	}
	w.run("apply", "-auto-approve", "-input=false")
	// What Kueue did, once it has had its time (it admits within a second here).
	time.Sleep(15 * time.Second)
	for name := range want {
		job, err := a.get(jobs.MPI.GVR, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		list, err := a.dyn.Resource(kueue.WorkloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: kueue.JobUIDLabel + "=" + string(job.GetUID())})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("%s: its Workload: %v (%d)", name, err, len(list.Items))
		}
		admitted := conditionTrue(&list.Items[0], "QuotaReserved")
		if admitted != (want[name] == "admit") {
			t.Errorf("%s: Kueue reserved quota: %v; the plan predicted %q (%s)", name, admitted, predicted[name], kueue.ReadWorkload(&list.Items[0]).Reason)
		}
		if name == "elsewhere" && !strings.Contains(kueue.ReadWorkload(&list.Items[0]).Reason, kueue.NamespaceMismatchOf(testKueueRelease())) {
			t.Errorf("Kueue holds the job of the unselected namespace otherwise than predicted: %s", kueue.ReadWorkload(&list.Items[0]).Reason)
		}
	}
}

// A queue whose admission checks ask for capacity admits a job once its capacity is provisioned,
// and the prediction says so, naming each check and its config; a job that waits for quota is
// told what follows it; a check whose config is missing admits nothing, which the prediction says
// instead of an admission.
func TestAProvisioningCheckIsInThePrediction(t *testing.T) {
	checks := []kube.ProvisioningCheck{{Check: "dws", Config: "gke"}}
	summary, detail := provisioningSaid("Kueue would admit X", "", "team", true, checks)
	if !strings.HasSuffix(summary, ", once its capacity is provisioned") || !strings.Contains(detail, "dws (ProvisioningRequestConfig gke)") {
		t.Errorf("admitted: %q / %q", summary, detail)
	}
	if summary, detail := provisioningSaid("Kueue would hold X", "", "team", false, checks); summary != "Kueue would hold X" ||
		!strings.Contains(detail, "once the capacity is provisioned") {
		t.Errorf("held: %q / %q", summary, detail)
	}
	checks[0].Missing = true
	if summary, detail := provisioningSaid("Kueue would admit X", "", "team", true, checks); !strings.Contains(summary, "never admit") ||
		!strings.Contains(detail, "ProvisioningRequestConfig gke, which does not exist") {
		t.Errorf("missing config: %q / %q", summary, detail)
	}
}

// A job that names no WorkloadPriorityClass, on a cluster (or in a plan) with one named
// "default", is told that Kueue may give it that class (behind a feature gate the provider cannot
// read); one that names a class, a cluster without "default", and Kueue v0.17 (which has no
// defaulting) are not.
func TestTheDefaultWorkloadPriorityClassIsSaidToBeUnknown(t *testing.T) {
	obj := func(class string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{}}
		if class != "" {
			o.SetLabels(map[string]string{jobs.PriorityClassLabel: class})
		}
		return o
	}
	with := &kube.QueueState{WorkloadPriorityClasses: map[string]int32{"default": 50}}
	without := &kube.QueueState{WorkloadPriorityClasses: map[string]int32{}}
	declared := kueue.NewDeclared()
	declared.PriorityClass(kueue.WorkloadPriorityClassSpec{Name: "default", Value: 70})
	if u := defaultClassUnknown(with, nil, obj("")); !strings.Contains(u, `"default" (value 50)`) || !strings.Contains(u, "WorkloadPriorityClassDefaulting") {
		t.Errorf("a job without a class, with \"default\" in the cluster: %q", u)
	}
	if u := defaultClassUnknown(without, declared, obj("")); !strings.Contains(u, "(value 70)") {
		t.Errorf("a job without a class, with \"default\" in the plan: %q", u)
	}
	if u := defaultClassUnknown(with, nil, obj("urgent")); u != "" {
		t.Errorf("a job naming a class: %q", u)
	}
	if u := defaultClassUnknown(without, nil, obj("")); u != "" {
		t.Errorf("a cluster without \"default\": %q", u)
	}
	v017 := &kube.QueueState{WorkloadPriorityClasses: map[string]int32{"default": 50}, Release: kueue.V017}
	if u := defaultClassUnknown(v017, nil, obj("")); u != "" {
		t.Errorf("Kueue v0.17: %q", u)
	}
}
