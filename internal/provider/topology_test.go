package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// Topology Aware Scheduling as code, judged by where Kueue puts the pods (in a ClusterQueue of
// topology flavors alone every pod set needs a flavor, so the launcher asks for a CPU): a job whose workers
// require one block of the local cluster's GPU nodes (cluster.BlockLabel: b1 of two nodes of 8
// GPUs, b2 of one) runs with every worker in one block, and a job of 17 one-GPU workers, which
// its queue's quota holds but no block does, is planned as held with Kueue's own words and is then
// held by Kueue for its topology; its plan names the largest block's room. A job whose launcher
// asks for nothing is planned as held, as Kueue then holds it, for want of a topology flavor.
// A TrainJob takes its runtime's request (training_runtime's required_topology): its 3 nodes run
// in one block, and 17 are planned as held and held as the MPI job of 17 is.
func TestAccKueue_topologyKeepsAJobsWorkersInOneBlock(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	prefix := acctest.RandomWithPrefix("tf-acc-tas")
	queues := providerConfig() + fmt.Sprintf(`
resource "training_topology" "dc" {
  name   = "%[1]s-dc"
  levels = [%[2]q, %[3]q]
}

resource "training_resource_flavor" "gpu" {
  name          = "%[1]s-gpu"
  node_labels   = { "nvidia.com/gpu.present" = "true" }
  tolerations   = ["gpu_node", "ssd_node"]
  topology_name = training_topology.dc.name
  lifecycle {
    replace_triggered_by = [training_topology.dc]
  }
}

resource "training_cluster_queue" "gpus" {
  name = "%[1]s-gpus"
  resource_group {
    covered_resources = ["cpu", "nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "cpu"
        nominal_quota = "64"
      }
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "32"
      }
    }
  }
}

resource "training_local_queue" "team" {
  name          = "%[1]s-team"
  cluster_queue = training_cluster_queue.gpus.name
}

resource "training_runtime" "tas" {
  name              = "%[1]s-rt"
  framework         = "torch"
  image             = "registry.example/train:1"
  command           = ["torchrun", "train.py"]
  required_topology = { node = %[2]q }
}
`, prefix, cluster.BlockLabel, cluster.RackLabel)
	job := func(name string, workers int, waitFor string) string {
		launcherCPU := `  roles             = { launcher = { cpu = "1" } }`
		if name == "bare" {
			launcherCPU = ""
		}
		return fmt.Sprintf(`
resource "training_mpi_job" %[2]q {
  name              = "%[1]s-%[2]s"
  image             = "registry.example/train:1"
  command           = ["mpirun", "hostname"]
  worker_count      = %[3]d
  gpus              = 1
%[6]s
  tolerations       = ["node-role.kubernetes.io/control-plane"]
  queue_name        = training_local_queue.team.name
  required_topology = { worker = %[4]q }
  wait_for          = %[5]q
}
`, prefix, name, workers, cluster.BlockLabel, waitFor, launcherCPU)
	}
	trainJob := func(name string, nodes int, waitFor string) string {
		return fmt.Sprintf(`
resource "training_train_job" %[2]q {
  name       = "%[1]s-%[2]s"
  runtime    = training_runtime.tas.name
  num_nodes  = %[3]d
  gpus       = 1
  queue_name = training_local_queue.team.name
  wait_for   = %[4]q
}
`, prefix, name, nodes, waitFor)
	}
	w := newWorkspace(t)
	t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
	w.write(queues + job("fits", 3, "running"))
	plan := planDiagnostics(t, w.run("plan", "-json", "-input=false"))
	if d := strings.Join(plan["training_mpi_job.fits"], "\n"); !strings.Contains(d, "Kueue would admit MPIJob default/"+prefix+"-fits at once") {
		t.Errorf("the plan of a job one block holds: %s", d)
	}
	w.run("apply", "-auto-approve", "-input=false")

	blocks := map[string]bool{}
	nodes := map[string]string{}
	list, err := a.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list.Items {
		nodes[n.Name] = n.Labels[cluster.BlockLabel]
	}
	workers := a.pods("default", jobs.MPI.PodSelector(prefix+"-fits")+","+jobs.JobRoleLabel+"=worker")
	for _, p := range workers {
		blocks[nodes[p.Spec.NodeName]] = true
	}
	if len(workers) != 3 || len(blocks) != 1 || blocks[""] {
		t.Errorf("the 3 workers run in blocks %v (%d pods)", blocks, len(workers))
	}
	template, err := a.get(jobs.MPI.GVR, "default", prefix+"-fits")
	if err != nil {
		t.Fatal(err)
	}
	if required, _ := jobs.MPI.ReadTopology(template); required["worker"] != cluster.BlockLabel {
		t.Errorf("the MPIJob's worker template asks for %q", required)
	}
	w.planIsEmpty()

	// 17 one-GPU workers: the queue's quota holds them, no block does (b1 holds 16 at most).
	// And a launcher that asks for nothing: a queue of topology flavors alone gives it none.
	// A TrainJob takes its runtime's request (the runtime exists now: its plan reads it). Kueue
	// packs the 3 nodes into one block beside the MPI job's workers, and holds 17 as it holds
	// the MPI job of 17.
	w.write(queues + job("fits", 3, "running") + job("big", 17, "created") + job("bare", 1, "created") +
		trainJob("tj", 3, "running") + trainJob("tjbig", 17, "created"))
	plan = planDiagnostics(t, w.run("plan", "-json", "-input=false"))
	noBlock := func(podSet string) string {
		return fmt.Sprintf(`Kueue would say: couldn't assign flavors to pod set %s: topology %q allows to fit only 16 out of 17 pod(s)`, podSet, prefix+"-dc")
	}
	// Each plan's warning says these, in this order. A launcher that asks for no GPU has no
	// flavor in a queue of topology flavors alone: Kueue v0.18 and later hold it, v0.17 admits it.
	bare := []string{"Kueue would hold MPIJob default/" + prefix + "-bare", "Kueue would say: failed to assign flavors to pod set launcher: no TAS flavor assigned"}
	if testKueueRelease() == kueue.V017 {
		bare = []string{"Kueue would admit MPIJob default/" + prefix + "-bare at once"}
	}
	for name, want := range map[string][]string{
		"training_mpi_job.big":     {"Kueue would hold MPIJob default/" + prefix + "-big", noBlock("worker")},
		"training_mpi_job.bare":    bare,
		"training_train_job.tj":    {"Kueue would admit TrainJob default/" + prefix + "-tj at once"},
		"training_train_job.tjbig": {"Kueue would hold TrainJob default/" + prefix + "-tjbig", noBlock("node")},
	} {
		parts := make([]string, len(want))
		for i, p := range want {
			parts[i] = regexp.QuoteMeta(p)
		}
		if d := strings.Join(plan[name], "\n"); !regexp.MustCompile("(?s)" + strings.Join(parts, ".*")).MatchString(d) {
			t.Errorf("the plan of %s says:\n%s\nwant %q", name, d, want)
		}
	}
	w.run("apply", "-auto-approve", "-input=false")
	held := map[string][]string{
		"big":  {fmt.Sprintf("topology %q", prefix+"-dc"), " of 17 pod(s)"},
		"bare": {"no TAS flavor assigned"},
	}
	if testKueueRelease() == kueue.V017 {
		delete(held, "bare")
		if got := a.heldFor(t, jobs.MPI, prefix+"-bare", "admitted"); got != "admitted" {
			t.Errorf("Kueue v0.17 on the launcher without a flavor: %q, want it admitted", got)
		}
	}
	for name, want := range held {
		if got := a.heldFor(t, jobs.MPI, prefix+"-"+name, want[0]); !strings.Contains(got, want[len(want)-1]) {
			t.Errorf("Kueue's verdict on %s: %q, want %q", name, got, want)
		}
	}
	if got := a.heldFor(t, jobs.Train, prefix+"-tjbig", fmt.Sprintf("topology %q", prefix+"-dc")); !strings.Contains(got, " of 17 pod(s)") {
		t.Errorf("Kueue's verdict on the TrainJob of 17 nodes: %q", got)
	}
	tjBlocks := map[string]bool{}
	tjPods := a.pods("default", jobs.Train.PodSelector(prefix+"-tj"))
	for _, p := range tjPods {
		tjBlocks[nodes[p.Spec.NodeName]] = true
	}
	if len(tjPods) != 3 || len(tjBlocks) != 1 || tjBlocks[""] {
		t.Errorf("the TrainJob's 3 nodes run in blocks %v (%d pods)", tjBlocks, len(tjPods))
	}
}

// heldFor is the message of the job's Workload once it says want, or what it says after a
// minute ("admitted" if Kueue admitted it).
func (a *api) heldFor(t *testing.T, kind *jobs.Kind, name, want string) string {
	t.Helper()
	var message string
	_ = wait.PollUntilContextTimeout(context.Background(), time.Second, 60*time.Second, true, func(context.Context) (bool, error) {
		wl := a.workloadOf(kind, name)
		switch {
		case wl == nil:
			return false, nil
		case conditionTrue(wl, "QuotaReserved"):
			message = "admitted"
			return true, nil
		}
		message = kueue.ReadWorkload(wl).Reason
		return strings.Contains(message, want), nil
	})
	return message
}
