package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Plans on the seed's node layout (GPU nodes tainted gpu_node, the SSD node ssd_node, 8 GPUs
// each, three tainted control-plane nodes) warn, through the real CLI, about jobs no node can
// host, naming the cause and the fix; jobs that fit, and plans without a cluster, say nothing.
func TestAccPlacement_planWarnings(t *testing.T) {
	plan := placementPlans(t)
	warning := regexp.MustCompile(`Warning: MPIJob default/\S+ cannot run on this cluster as it is`)
	job := func(extra string) string { return mpiJobBlock("p", "tf-acc-placement", extra) }
	cases := []struct {
		name, job string
		want      []string // nothing: no placement warning
	}{
		{"a GPU job that tolerates no taint", job("  gpus = 1\n"), []string{
			"No node can host a worker pod:",
			"2 nodes (cn-beijing.192.168.3.228, cn-beijing.192.168.3.229) have the taint gpu_node=invalid:NoSchedule, which it does not tolerate (tolerations = [\"gpu_node\"] would)",
			"node cn-beijing.192.168.3.230 has the taint ssd_node=invalid:NoSchedule",
			"No node can host a launcher pod:"}},
		{"tolerating the GPU nodes' taint", job("  gpus = 1\n  tolerations = [\"gpu_node\"]\n"), nil},
		{"all tolerates every taint", job("  gpus = 1\n  tolerations = [\"all\"]\n"), nil},
		{"more GPUs than any node has", job("  gpus = 16\n  tolerations = [\"all\"]\n"), []string{
			"It asks for 16 nvidia.com/gpu; the most any Ready node has is 8."}},
		{"a gang larger than the GPU nodes", strings.Replace(job("  gpus = 8\n  tolerations = [\"gpu_node\"]\n"), "worker_count = 1", "worker_count = 4", 1), []string{
			"The nodes that can host a worker pod (cn-beijing.192.168.3.228, cn-beijing.192.168.3.229) hold 2 at most, but the job runs 4 at once (4 x 8 = 32 nvidia.com/gpu; those nodes have 16 in all)",
			"Nodes with room it cannot use: node cn-beijing.192.168.3.230 (room for 1) has the taint ssd_node=invalid:NoSchedule, which it does not tolerate (tolerations = [\"ssd_node\"] would)."}},
		{"a node selector no node matches", job("  gpus = 1\n  tolerations = [\"all\"]\n  node_selector = { accelerator = \"v100\" }\n"), []string{
			"lack the node selector's labels accelerator=v100"}},
	}
	for _, tc := range cases {
		out := plan(providerConfig(), tc.job)
		if tc.want == nil {
			if warning.MatchString(out) {
				t.Errorf("%s: want no placement warning, got:\n%s", tc.name, out)
			}
			continue
		}
		if !warning.MatchString(out) {
			t.Errorf("%s: want a placement warning, got:\n%s", tc.name, out)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(flat(out), want) {
				t.Errorf("%s: the plan does not say %q:\n%s", tc.name, want, out)
			}
		}
	}

	// Switched off, and without a cluster: no warning, no error.
	off := strings.Replace(providerConfig(), "{\n", "{\n  placement_check = false\n", 1)
	if out := plan(off, job("  gpus = 1\n")); warning.MatchString(out) {
		t.Errorf("placement_check = false still warns:\n%s", out)
	}
	unreachable := fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", unreachableKubeconfig(t))
	if out := plan(unreachable, job("  gpus = 1\n")); strings.Count(out, "Warning:") != strings.Count(out, "Warning: Provider development overrides") {
		t.Errorf("a plan without a cluster warns:\n%s", out)
	}
}

// A TrainJob's pods are made from its runtime: the plan checks those Trainer will make, on
// Trainer's own torch-distributed and deepspeed-distributed (MPI: a launcher and nodes)
// runtimes, with the job's placement merged in; a runtime this apply makes cannot be read yet,
// so that plan says nothing.
func TestAccPlacement_trainJobOnItsRuntime(t *testing.T) {
	plan := placementPlans(t)
	warning := regexp.MustCompile(`Warning: TrainJob default/tf-acc-placement-tj cannot run on this cluster as it is: its node pods`)
	job := func(runtime, extra string) string {
		return fmt.Sprintf(`
resource "training_train_job" "p" {
  name      = "tf-acc-placement-tj"
  runtime   = %s
  num_nodes = 2
  gpus      = 1
%s}
`, runtime, extra)
	}
	out := plan(providerConfig(), job(`"torch-distributed"`, ""))
	if !warning.MatchString(out) || !strings.Contains(flat(out), "which it does not tolerate (tolerations = [\"gpu_node\"] would)") {
		t.Errorf("a GPU TrainJob that tolerates no taint: want a warning naming gpu_node, got:\n%s", out)
	}
	if out := plan(providerConfig(), job(`"torch-distributed"`, "  tolerations = [\"gpu_node\"]\n")); warning.MatchString(out) {
		t.Errorf("a TrainJob tolerating gpu_node: want no warning, got:\n%s", out)
	}
	// On an MPI runtime the job's placement reaches the launcher too (its runtime patch names
	// every replicated job the runtime has), and the plan checks it so.
	if out := plan(providerConfig(), job(`"deepspeed-distributed"`, "  tolerations = [\"gpu_node\"]\n")); strings.Contains(out, "cannot run on this cluster") {
		t.Errorf("a TrainJob on an MPI runtime tolerating gpu_node: want no warning, got:\n%s", out)
	}
	if out := plan(providerConfig(), job("training_runtime.new.name", "")+`
resource "training_runtime" "new" {
  name      = "tf-acc-placement-rt"
  framework = "torch"
  image     = "pytorch/pytorch:2"
}
`); warning.MatchString(out) {
		t.Errorf("a TrainJob on a runtime this apply makes: want no warning, got:\n%s", out)
	}
}

// placementPlans runs its tests in parallel on the local cluster with the seed's node taints
// held as they are, and gives a plan of a provider block and a configuration through the CLI.
func placementPlans(t *testing.T) func(provider, config string) string {
	newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	t.Cleanup(nodeTaintsMu.RUnlock)
	w := newWorkspace(t)
	return func(provider, config string) string {
		t.Helper()
		w.write(provider + config)
		return w.run("plan", "-input=false")
	}
}

// flat collapses whitespace: the CLI wraps warnings.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
