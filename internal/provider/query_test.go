package provider

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// requireCLI skips a test that needs a Terraform CLI feature the one under test lacks (the
// terraform on PATH, or OpenTofu), saying so.
func requireCLI(t *testing.T, minimum, feature string) {
	t.Helper()
	if ok, cli := cliAtLeast(t, minimum); !ok {
		t.Skipf("%s needs Terraform %s or later; this CLI is %s (make testacc builds one: tools/terraform)", feature, minimum, cli)
	}
}

// cliAtLeast says whether the CLI the tests run is Terraform (not OpenTofu) at minimum or later,
// and what it is.
func cliAtLeast(t *testing.T, minimum string) (bool, string) {
	t.Helper()
	out, err := exec.Command(terraformCLI(), "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version: %v", terraformCLI(), err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	ok := !strings.Contains(terraformCLI(), "tofu") && !version.Must(version.NewVersion(v.Version)).LessThan(version.Must(version.NewVersion(minimum)))
	return ok, filepath.Base(terraformCLI()) + " " + v.Version
}

// arenaJob makes a job object as Arena or kubectl would: the provider's builder for its shape,
// without the provider's own marks, with Arena's labels.
func arenaJob(t *testing.T, a *api, spec jobs.Spec, mutate ...func(*unstructured.Unstructured)) {
	t.Helper()
	obj, dependents, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mutate {
		m(obj)
	}
	for _, o := range append(dependents, obj) {
		labels := map[string]string{"release": obj.GetName(), "app": spec.Kind().Name + "job", "createdBy": "arena"}
		o.SetLabels(labels)
		o.SetAnnotations(nil)
		gvr := spec.Kind().GVR
		if d, err := spec.Kind().DependentOf(o); err == nil && o != obj {
			gvr = d.GVR
		}
		if _, err := a.dyn.Resource(gvr).Namespace(o.GetNamespace()).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// Jobs that Arena or kubectl made (one of each kind, in a namespace of their own, with a
// decoy in another) and the GPU nodes' taints are brought under Terraform by `terraform query
// -generate-config-out`: the query finds exactly them, the generated configuration validates,
// its apply imports every one without changing any, and the next plan is empty.
func TestAccQuery_migrateJobsMadeOutsideTerraform(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.14.0", "terraform query")
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	ctx := context.Background()
	ns := a.namespace("tf-acc-migrate", nil)
	pod := func(gpus int64) jobs.PodOptions {
		return jobs.PodOptions{Image: "registry.example/train:1", GPUs: gpus, GPUResource: jobs.DefaultGPUResource,
			Tolerations: []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}}
	}
	made := []jobs.Spec{
		jobs.MPIJobSpec{Name: "resnet", Namespace: ns, Pod: pod(1), Workers: 2, LauncherCommand: []string{"mpirun", "python", "train.py"}},
		jobs.TFJobSpec{Name: "mnist", Namespace: ns, Pod: pod(1), Workers: 2, Command: []string{"python", "mnist.py"}},
		jobs.PyTorchJobSpec{Name: "bert", Namespace: ns, Pod: pod(1), Workers: 1, Command: []string{"python", "bert.py"}},
		jobs.ElasticJobSpec{Name: "gpt", Namespace: ns, Pod: pod(1), Workers: 2, MinWorkers: 1, MaxWorkers: 4, Launcher: "torchrun",
			Command: []string{"python", "gpt.py"}},
	}
	// The TF job's workers have an init container, which only its pod_patch says.
	initContainer := func(obj *unstructured.Unstructured) {
		path := []string{"spec", "tfReplicaSpecs", "Worker", "template", "spec", "initContainers"}
		if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"name": "fetch", "image": "busybox"}}, path...); err != nil {
			t.Fatal(err)
		}
	}
	for _, spec := range made {
		if spec.Kind() == jobs.TF {
			arenaJob(t, a, spec, initContainer)
			continue
		}
		arenaJob(t, a, spec)
	}
	decoy := acctest.RandomWithPrefix("tf-acc-decoy")
	arenaJob(t, a, jobs.MPIJobSpec{Name: decoy, Namespace: "default", Pod: pod(1), Workers: 1, LauncherCommand: []string{"mpirun", "true"}})
	t.Cleanup(func() {
		_ = a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Delete(context.Background(), decoy, metav1.DeleteOptions{})
	})
	uids := map[string]string{}
	for _, spec := range made {
		obj := getJob(t, a, spec.Kind(), ns, name(spec))
		uids[name(spec)] = string(obj.GetUID())
	}

	w := newWorkspace(t)
	w.write(providerConfig())
	query := ""
	for _, kind := range jobs.Kinds() {
		query += `
list "training_` + kind.Name + `_job" "found" {
  provider         = training
  include_resource = true
  config {
    namespace = "` + ns + `"
  }
}
`
	}
	query += `
list "training_node_taint" "gpu" {
  provider         = training
  include_resource = true
  config {
    key = "gpu_node"
  }
}
`
	if err := os.WriteFile(filepath.Join(w.dir, "migrate.tfquery.hcl"), []byte(query), 0o600); err != nil {
		t.Fatal(err)
	}
	out := w.run("query", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(w.dir, "generated.tf"))
	if err != nil {
		t.Fatalf("no generated configuration: %v\n%s", err, out)
	}
	// Exactly the jobs of the namespace, and the two GPU nodes' taints.
	// The jobs' resource blocks name them at two-space indentation; identities deeper.
	var jobsImported []string
	for _, m := range regexp.MustCompile(`(?m)^  name\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(generated), -1) {
		jobsImported = append(jobsImported, m[1])
	}
	sort.Strings(jobsImported)
	// The elastic job, which holds no record of the inputs it was made from (another tool made
	// it), is listed as its workers run it: their command as it is.
	want := []string{"bert", "gpt", "mnist", "resnet"}
	if strings.Join(jobsImported, ",") != strings.Join(want, ",") || strings.Contains(string(generated), decoy) {
		t.Fatalf("the query found jobs %v, want exactly %v (and not %s):\n%s", jobsImported, want, decoy, generated)
	}
	flatOut := flat(out)
	if !strings.Contains(string(generated), `"python", "gpt.py"`) {
		t.Errorf("the elastic job's command is not its workers':\n%s", generated)
	}
	// The TF job's init container, which no other attribute says, is its workers' pod_patch.
	if !regexp.MustCompile(`(?s)pod_patch\s*=\s*\{\s*worker\s*=.*initContainers.*fetch`).Match(generated) {
		t.Errorf("the TF job's init container is not its pod_patch:\n%s", generated)
	}
	if n := strings.Count(flatOut, "cannot say everything it holds"); n != 0 {
		t.Errorf("%d jobs marked as holding what their resource cannot say, want none:\n%s", n, out)
	}
	if n := strings.Count(string(generated), "import {"); n != len(want)+2 {
		t.Fatalf("%d import blocks, want %d (%d jobs, 2 taints):\n%s", n, len(want)+2, len(want), generated)
	}
	for _, word := range []string{`tolerations`, `"gpu_node"`, `gpus`, `worker_count`} {
		if !strings.Contains(string(generated), word) {
			t.Errorf("the generated configuration does not use the provider's words (%s):\n%s", word, generated)
		}
	}
	w.run("validate")
	w.run("apply", "-auto-approve", "-input=false")
	w.planIsEmpty()
	for _, spec := range made {
		if obj := getJob(t, a, spec.Kind(), ns, name(spec)); string(obj.GetUID()) != uids[name(spec)] {
			t.Errorf("%s %s was replaced by the import", spec.Kind().Object, name(spec))
		}
	}
	// The taints were imported, not added: destroy leaves them, and deletes the imported jobs.
	w.run("destroy", "-auto-approve", "-input=false")
	for _, spec := range made {
		if err := a.waitGone(spec.Kind(), ns, name(spec)); err != nil {
			t.Errorf("destroy left %s %s: %v", spec.Kind().Object, name(spec), err)
		}
	}
	for _, service := range []string{"gpt-etcd", "gpt-worker"} {
		if _, err := a.kube.CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("destroy left the elastic job's Service %s (err=%v)", service, err)
		}
	}
	nodes, err := a.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tainted := 0
	for _, n := range nodes.Items {
		if _, ok := jobs.FindTaint(n.Spec.Taints, "gpu_node", corev1.TaintEffectNoSchedule); ok {
			tainted++
		}
	}
	if tainted != 2 {
		t.Errorf("destroying imported taints removed them: %d GPU nodes still tainted, want 2", tainted)
	}
}

func name(spec jobs.Spec) string {
	obj, _, err := spec.Build()
	if err != nil {
		panic(err)
	}
	return obj.GetName()
}

func getJob(t *testing.T, a *api, kind *jobs.Kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := a.get(kind.GVR, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// A job applied by a Terraform without resource identity (the terraform on PATH, 1.11 here)
// is planned by a newer one without a change, and its first refresh records the identity.
func TestAccIdentity_stateWithoutIdentityUpgrades(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.12.0", "resource identity")
	old, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("no terraform on PATH to write a state without identity")
	}
	if out, err := exec.Command(old, "version", "-json").Output(); err != nil || !strings.Contains(string(out), `"terraform_version": "1.11`) && !strings.Contains(string(out), `"terraform_version": "1.10`) {
		t.Skipf("the terraform on PATH (%s) already writes identity", strings.TrimSpace(string(out)))
	}
	t.Parallel()
	name := acctest.RandomWithPrefix("tf-acc-identity")
	w := newWorkspace(t)
	w.write(providerConfig() + mpiJobBlock("job", name, "  tolerations = [\"ssd_node\"]\n  wait_for = \"created\"\n"))
	cmd, out := w.command(nil, "apply", "-auto-approve", "-input=false")
	cmd.Path, cmd.Args[0] = old, old
	if err := cmd.Run(); err != nil {
		t.Fatalf("terraform 1.11 apply: %v\n%s", err, out)
	}
	defer w.run("destroy", "-auto-approve", "-input=false")
	uid := string(getJob(t, a, jobs.MPI, "default", name).GetUID())
	w.planIsEmpty()
	w.run("apply", "-refresh-only", "-auto-approve", "-input=false")
	state := w.run("show", "-json")
	if !regexp.MustCompile(`"identity":\{"name":"` + name + `","namespace":"default"\}`).MatchString(state) {
		t.Errorf("the refreshed state records no identity:\n%s", state)
	}
	if got := string(getJob(t, a, jobs.MPI, "default", name).GetUID()); got != uid {
		t.Errorf("the job was replaced (%s, was %s)", got, uid)
	}
}
