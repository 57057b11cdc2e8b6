package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A fleet as code: the tests' cluster as MultiKueue's manager and a second local cluster as its
// worker, declared in one configuration (the worker's queues through an aliased provider). An
// elastic Horovod MPIJob and a TrainJob submitted to the manager's queue are dispatched to the
// worker: their pods run there and none in the manager, and the jobs' worker_cluster, status and
// instances are read from the worker (each instance is a pod of the worker), after apply,
// refresh and import. The plan of more jobs says which worker cluster would admit each, by the
// worker's own queues, and checks their placement on the worker's nodes. A rescale of the MPIJob
// replaces the queued job, and the new one runs in the worker with the new count. A provider block
// without the worker says at once that a job dispatched there cannot be followed, and one that
// waits for the job's end follows it by the status MultiKueue mirrors. Destroy leaves nothing in
// either cluster: no job, Workload or pod.
func TestAccMultiKueue_aFleetRunsDispatchedJobsInTheWorkerAndReadsThemThere(t *testing.T) {
	manager := newAPI(t)
	workerKubeconfig, err := clustertest.Worker()
	if err != nil {
		t.Fatal(err)
	}
	worker := newAPIAt(t, workerKubeconfig)
	prefix := acctest.RandomWithPrefix("tf-acc-fleet")
	workerName := prefix + "-w1"
	queues := func(provider, gpus string) string {
		return fmt.Sprintf(`
resource "training_resource_flavor" %[2]q {
  provider = %[3]s
  name     = "%[1]s-gpu"
}

resource "training_cluster_queue" %[2]q {
  provider = %[3]s
  name     = "%[1]s"
%[4]s  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.%[2]s.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = %[5]q
      }
    }
  }
}

resource "training_local_queue" %[2]q {
  provider      = %[3]s
  name          = "%[1]s"
  cluster_queue = training_cluster_queue.%[2]s.name
}

resource "training_runtime" %[2]q {
  provider  = %[3]s
  name      = "%[1]s-rt"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command   = ["torchrun", "/workspace/train.py"]
}
`, prefix, map[string]string{"training": "manager", "training.worker": "worker"}[provider], provider,
			map[string]string{"training": "  admission_checks = [training_admission_check.fleet.name]\n"}[provider], gpus)
	}
	config := fmt.Sprintf(`
provider "training" {
  config_path = %[1]q
  worker_cluster {
    name        = %[3]q
    config_path = %[2]q
  }
}

provider "training" {
  alias       = "worker"
  config_path = %[2]q
}

resource "training_multikueue_cluster" "w1" {
  name              = %[3]q
  kubeconfig_secret = %[4]q
}

resource "training_multikueue_config" "fleet" {
  name     = "%[5]s"
  clusters = [training_multikueue_cluster.w1.name]
}

resource "training_admission_check" "fleet" {
  name              = "%[5]s"
  multikueue_config = training_multikueue_config.fleet.name
}
`, providerKubeconfig(), workerKubeconfig, workerName, clustertest.WorkerSecret, prefix) +
		queues("training", "64") + queues("training.worker", "8") + fmt.Sprintf(`
resource "training_mpi_job" "fleet" {
  name         = "%[1]s-mpi"
  image        = "registry.example/horovod:0.13.11"
  command      = ["python", "train.py"]
  worker_count = 2
  elastic = {
    min_workers = 1
    max_workers = 4
  }
  gpus         = 1
  tolerations  = ["gpu_node", "ssd_node"]
  queue_name   = training_local_queue.manager.name
  wait_for     = "running"
  depends_on   = [training_local_queue.worker, training_multikueue_cluster.w1]
}

resource "training_train_job" "fleet" {
  name        = "%[1]s-train"
  runtime     = training_runtime.manager.name
  num_nodes   = 2
  gpus        = 1
  tolerations = ["gpu_node"]
  queue_name  = training_local_queue.manager.name
  wait_for    = "running"
  depends_on  = [training_local_queue.worker, training_runtime.worker, training_multikueue_cluster.w1]
}
`, prefix)

	type dispatched struct {
		address, name string
		kind          *jobs.Kind
		pods          int
	}
	dispatchedJobs := []dispatched{
		{"training_mpi_job.fleet", prefix + "-mpi", jobs.MPI, 3},
		{"training_train_job.fleet", prefix + "-train", jobs.Train, 2},
	}
	// Each alias of a provider is a process of its own only when Terraform starts the provider
	// (terraform-plugin-testing serves every alias from one in-process server, which keeps one
	// configuration): so the configuration runs through the CLI with the built provider.
	w := newWorkspace(t)
	w.write(config)

	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			_, _ = w.try(nil, "destroy", "-auto-approve", "-input=false")
		}
	})
	// readFromTheWorker checks that each job was dispatched to the worker, runs, and that its
	// instances in state are its pods in the worker, while the manager has none of its pods.
	readFromTheWorker := func(when string) {
		t.Helper()
		state := showState(t, w)
		for _, j := range dispatchedJobs {
			v := state[j.address]
			if v == nil {
				t.Fatalf("%s: %s is not in state", when, j.address)
			}
			if v["worker_cluster"] != workerName || v["status"] != jobs.Running {
				t.Errorf("%s: %s has worker_cluster %v and status %v, want %s and %s", when, j.address, v["worker_cluster"], v["status"], workerName, jobs.Running)
			}
			if got := manager.pods("default", j.kind.PodSelector(j.name)); len(got) > 0 {
				t.Errorf("%s: %s has %d pods in the manager cluster, want none", when, j.name, len(got))
			}
			var there, read []string
			for _, p := range worker.pods("default", j.kind.PodSelector(j.name)) {
				there = append(there, p.Name+"@"+p.Spec.NodeName)
			}
			instances, _ := v["instances"].([]any)
			for _, in := range instances {
				m, _ := in.(map[string]any)
				read = append(read, fmt.Sprintf("%v@%v", m["name"], m["node"]))
			}
			slices.Sort(there)
			slices.Sort(read)
			if len(read) != j.pods || !slices.Equal(read, there) {
				t.Errorf("%s: %s has instances %v, want its %d pods in the worker cluster %v", when, j.address, read, j.pods, there)
			}
		}
	}
	w.run("apply", "-auto-approve", "-input=false")
	readFromTheWorker("after apply")
	w.planIsEmpty()
	w.run("apply", "-refresh-only", "-auto-approve", "-input=false")
	readFromTheWorker("after a refresh")

	// A dispatched job imports as a local one does, read where it runs, with nothing to change.
	for _, j := range dispatchedJobs {
		w.run("state", "rm", j.address)
		w.run("import", "-input=false", j.address, "default/"+j.name)
	}
	w.planIsEmpty()
	readFromTheWorker("after import")

	// The plan of more jobs says which worker would take each: the worker has 8 GPUs, 4 of them
	// free; the manager's queue has 64. Their placement is checked on the worker's nodes, where
	// no node has 16 GPUs.
	planned := func(label string, workers, gpus int) string {
		return fmt.Sprintf(`
resource "training_mpi_job" %[1]q {
  name         = "%[2]s-%[1]s"
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "hostname"]
  worker_count = %[3]d
  gpus         = %[4]d
  tolerations  = ["gpu_node", "ssd_node"]
  queue_name   = training_local_queue.manager.name
}
`, label, prefix, workers, gpus)
	}
	w.write(config + planned("fits", 2, 1) + planned("toobig", 12, 1) + planned("huge", 1, 16))
	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Kueue would admit MPIJob default/` + prefix + `-fits at once, dispatched to worker cluster ` + workerName),
		regexp.MustCompile(`worker cluster ` + workerName + ` would admit it in ClusterQueue ` + prefix + `, on flavors: worker: nvidia.com/gpu on ` + prefix + `-gpu`),
		regexp.MustCompile(`Kueue would admit MPIJob default/` + prefix + `-toobig at once, but no worker cluster would admit it now`),
		regexp.MustCompile(`worker cluster ` + workerName + ` would never admit it as its ClusterQueue ` + prefix + ` is now`),
		// Its pods would run in the worker: the placement check reads the worker's nodes.
		regexp.MustCompile(`MPIJob default/` + prefix + `-huge cannot run on worker cluster ` + workerName + ` as it is: its worker pods`),
	} {
		if !want.MatchString(plan) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, "cannot run on this cluster") {
		t.Errorf("the plan checks a dispatched job's placement against the manager's nodes:\n%s", plan)
	}
	// A queued job's rescale, elastic Horovod's included, is a replacement (Kueue admitted its
	// Workload for the old count), and the new job runs in the worker with the new count.
	w.write(strings.Replace(config, "worker_count = 2", "worker_count = 3", 1))
	if plan := w.run("plan", "-input=false"); !strings.Contains(plan, "training_mpi_job.fleet must be replaced") {
		t.Errorf("the rescale of the dispatched elastic MPIJob does not plan its replacement:\n%s", plan)
	}
	w.run("apply", "-auto-approve", "-input=false")
	dispatchedJobs[0].pods = 4
	readFromTheWorker("after the rescale")

	// A provider block that does not give the worker cannot follow a job dispatched there: the
	// wait for it to run ends at once (not at its ten-minute timeout), saying where it runs and
	// which block would follow it, and the job is in state, untainted.
	unfollowed := newWorkspace(t)
	unfollowed.write(providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "unfollowed" {
  name         = "%[1]s-unfollowed"
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "hostname"]
  worker_count = 1
  gpus         = 1
  tolerations  = ["gpu_node", "ssd_node"]
  queue_name   = %[1]q
  timeouts {
    create = "10m"
  }
}
`, prefix))
	applied := planDiagnostics(t, unfollowed.run("apply", "-json", "-auto-approve", "-input=false"))
	if said := fmt.Sprint(applied["training_mpi_job.unfollowed"]); !strings.Contains(said, "runs in worker cluster "+workerName) ||
		!strings.Contains(said, `Add a worker_cluster block named "`+workerName+`"`) {
		t.Errorf("the apply of a job dispatched to a worker the provider block does not give does not say so: %v", applied)
	}
	unfollowed.planIsEmpty()
	unfollowed.run("destroy", "-auto-approve", "-input=false")

	// A pipeline's step that waits for the end of a job dispatched there follows the job here, by
	// the status MultiKueue mirrors from the copy: the apply ends when the copy has succeeded,
	// with the job SUCCEEDED in state, not at the dispatch.
	ended := newWorkspace(t)
	endedName := prefix + "-ended"
	ended.write(providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "ended" {
  name         = %[1]q
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "hostname"]
  worker_count = 1
  gpus         = 1
  tolerations  = ["gpu_node", "ssd_node"]
  queue_name   = %[2]q
  wait_for     = "succeeded"
  timeouts {
    create = "5m"
  }
}
`, endedName, prefix))
	apply := ended.start("apply", "-auto-approve", "-input=false")
	launcher := jobs.MPI.PodSelector(endedName) + "," + jobs.JobRoleLabel + "=launcher"
	if err := worker.waitPods(launcher, func(pods []corev1.Pod) bool {
		return len(pods) == 1 && pods[0].Status.Phase == corev1.PodRunning
	}); err != nil {
		t.Fatalf("the dispatched job's launcher does not run in the worker: %v\n%s", err, apply.out)
	}
	if over, err := apply.ended(0); over {
		t.Fatalf("the apply waiting for the job's end ended (%v) while the job ran in the worker:\n%s", err, apply.out)
	}
	worker.finishPods(launcher)
	if err := apply.wait(t, 4*time.Minute, "the apply, after the job succeeded in the worker,"); err != nil {
		t.Fatalf("the apply failed: %v\n%s", err, apply.out)
	}
	if v := showState(t, ended)["training_mpi_job.ended"]; v["status"] != jobs.Succeeded || v["worker_cluster"] != workerName {
		t.Errorf("the job that ended in worker %s has status %v and worker_cluster %v in state", workerName, v["status"], v["worker_cluster"])
	}
	ended.run("destroy", "-auto-approve", "-input=false")

	w.run("destroy", "-auto-approve", "-input=false")
	destroyed = true
	for _, j := range dispatchedJobs {
		for cluster, a := range map[string]*api{"manager": manager, "worker": worker} {
			if _, err := a.get(j.kind.GVR, "default", j.name); err == nil {
				t.Errorf("%s %s is left in the %s cluster after destroy", j.kind.Object, j.name, cluster)
			}
			if pods := a.pods("default", j.kind.PodSelector(j.name)); len(pods) > 0 {
				t.Errorf("%d pods of %s are left in the %s cluster after destroy", len(pods), j.name, cluster)
			}
		}
	}
	for cluster, a := range map[string]*api{"manager": manager, "worker": worker} {
		list, err := a.dyn.Resource(kueue.WorkloadGVR).Namespace("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, wl := range list.Items {
			if q, _, _ := unstructured.NestedString(wl.Object, "spec", "queueName"); q == prefix {
				t.Errorf("Workload %s is left in the %s cluster after destroy", wl.GetName(), cluster)
			}
		}
	}
}

// shownResource is a root module resource as `terraform show -json` gives it.
type shownResource struct {
	Address string         `json:"address"`
	Tainted bool           `json:"tainted"`
	Values  map[string]any `json:"values"`
}

// shownResources are the workspace's root module resources as `terraform show -json` gives them.
func shownResources(t *testing.T, w *workspace) []shownResource {
	t.Helper()
	var shown struct {
		Values struct {
			RootModule struct {
				Resources []shownResource `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(w.run("show", "-json")), &shown); err != nil {
		t.Fatal(err)
	}
	return shown.Values.RootModule.Resources
}

// showState is the workspace's state as `terraform show -json` gives it: each root module
// resource's values by address.
func showState(t *testing.T, w *workspace) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, r := range shownResources(t, w) {
		out[r.Address] = r.Values
	}
	return out
}

// newAPIAt is newAPI for another cluster than the tests' own.
func newAPIAt(t *testing.T, kubeconfig string) *api {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return &api{t: t, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
}
