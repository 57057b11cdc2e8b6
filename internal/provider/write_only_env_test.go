package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A write-only variable is in neither the plan (its text or its JSON), the state nor a TRACE log
// of apply, plan, import and destroy: the apply writes it into the Secret the object owns, which
// the pods take (an MPIJob's and a TrainingRuntime's whole; a TrainJob's trainer by each name). A
// new version writes the new value into the Secret and changes the object in place (same UID); an
// import reads the version back, so its plan is empty; a TrainJob given a new name plans its
// replacement; destroy removes the Secret with the object. A ClusterTrainingRuntime, whose jobs
// run in every namespace, is refused them at plan.
func TestAccWriteOnlyEnv_neverInPlanStateOrLogsAndANewVersionRewritesItsSecret(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.11.0", "write-only attributes")
	for _, holder := range []string{"mpi_job", "train_job", "runtime"} {
		t.Run(holder, func(t *testing.T) {
			t.Parallel()
			writeOnlyEnvCase(t, a, holder)
		})
	}
}

// writeOnlyBlocks are, by resource type (without its training_ prefix), an object named name with
// the write-only variables given, its API, and where its pods' template says how they take the
// Secret.
var writeOnlyBlocks = map[string]struct {
	block func(name, variables string, version int) string
	gvr   schema.GroupVersionResource
	takes []string
}{
	"mpi_job": {
		block: func(name, variables string, version int) string {
			return mpiJobBlock("test", name, fmt.Sprintf("  wait_for                 = \"created\"\n  sensitive_env_wo         = %s\n  sensitive_env_wo_version = %d\n", variables, version))
		},
		gvr:   jobs.MPI.GVR,
		takes: []string{"spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers"},
	},
	"runtime": {
		block: func(name, variables string, version int) string {
			return fmt.Sprintf(`
resource "training_runtime" "test" {
  name                     = %q
  namespace                = "default"
  framework                = "torch"
  image                    = "registry.example/train:1"
  sensitive_env_wo         = %s
  sensitive_env_wo_version = %d
}
`, name, variables, version)
		},
		gvr:   jobs.TrainingRuntimeGVR,
		takes: []string{"spec", "template", "spec", "replicatedJobs"},
	},
	"train_job": {
		block: func(name, variables string, version int) string {
			return fmt.Sprintf(`
resource "training_train_job" "test" {
  name                     = %q
  runtime                  = "torch-distributed"
  image                    = "registry.example/train:1"
  command                  = ["torchrun", "train.py"]
  num_nodes                = 1
  wait_for                 = "created"
  sensitive_env_wo         = %s
  sensitive_env_wo_version = %d
}
`, name, variables, version)
		},
		gvr:   jobs.Train.GVR,
		takes: []string{"spec", "trainer", "env"},
	},
}

func writeOnlyEnvCase(t *testing.T, a *api, holder string) {
	ctx := context.Background()
	name := acctest.RandomWithPrefix("tf-acc-wo-" + strings.TrimSuffix(holder, "_job"))
	first, second := "wo-first-"+acctest.RandString(24), "wo-second-"+acctest.RandString(24)
	// The value comes as a team's pipeline gives it: an ephemeral variable, from the environment.
	kb := writeOnlyBlocks[holder]
	configWith := func(variables string, version int) string {
		return providerConfig() + `
variable "token" {
  type      = string
  ephemeral = true
}
` + kb.block(name, variables, version)
	}
	config := func(version int) string { return configWith("{ TOKEN = var.token }", version) }
	value := first
	trace := func() []string { return []string{"TF_LOG=TRACE", "TF_VAR_token=" + value} }
	var logs strings.Builder
	run := func(w *workspace, args ...string) string {
		t.Helper()
		out, err := w.try(trace(), args...)
		logs.WriteString(out)
		if err != nil {
			t.Fatalf("terraform %v: %v\n%s", args, err, out)
		}
		return out
	}
	secretValue := func() (string, *unstructured.Unstructured) {
		t.Helper()
		s, err := a.kube.CoreV1().Secrets("default").Get(ctx, jobs.WriteOnlyEnvSecret(name), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the job's write-only Secret: %v", err)
		}
		job, err := a.get(kb.gvr, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != job.GetUID() || s.Labels[jobs.WriteOnlyEnvLabel] != name {
			t.Errorf("the Secret is not the job's: owners %v, labels %v", s.OwnerReferences, s.Labels)
		}
		return string(s.Data["TOKEN"]), job
	}

	w := newWorkspace(t)
	w.write(config(1))
	run(w, "apply", "-auto-approve", "-input=false")
	got, job := secretValue()
	if got != first {
		t.Errorf("the Secret holds %q, want the first value", got)
	}
	takes, _, _ := unstructured.NestedSlice(job.Object, kb.takes...)
	want := `"envFrom":[{"secretRef":{"name":"` + jobs.WriteOnlyEnvSecret(name) + `"}}]`
	if holder == "train_job" {
		want = `{"name":"TOKEN","valueFrom":{"secretKeyRef":{"key":"TOKEN","name":"` + jobs.WriteOnlyEnvSecret(name) + `"}}}`
	}
	if raw, _ := json.Marshal(takes); !strings.Contains(string(raw), want) {
		t.Errorf("the pods do not take the Secret: %s", raw)
	}
	if out, err := w.try(trace(), "plan", "-detailed-exitcode", "-input=false"); err != nil {
		t.Errorf("the plan after the apply is not empty (%v):\n%s", err, out)
	}

	// A new version: the plan says the update and its warning, in JSON too.
	w.write(config(2))
	value = second
	plan := run(w, "plan", "-input=false", "-out=tfplan")
	// A job's running pods keep their values, and its plan says so.
	warns := holder == "runtime" || strings.Contains(plan, "keep the values they started with")
	if !strings.Contains(plan, "0 to add, 1 to change, 0 to destroy") || !warns {
		t.Errorf("a new version does not plan an in-place update that warns about running pods:\n%s", plan)
	}
	planJSON := run(w, "show", "-json", "tfplan")
	run(w, "apply", "-auto-approve", "-input=false", "tfplan")
	got, again := secretValue()
	if got != second || again.GetUID() != job.GetUID() || again.GetAnnotations()[jobs.WriteOnlyEnvAnnotation] != "2" {
		t.Errorf("after the new version: Secret %q, job UID %s (was %s), version %q", got, again.GetUID(), job.GetUID(), again.GetAnnotations()[jobs.WriteOnlyEnvAnnotation])
	}
	state, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}

	// Imported, the version reads back: the plan with the same configuration is empty.
	imported := newWorkspace(t)
	imported.write(strings.Replace(config(2), `  wait_for                 = "created"`+"\n", "", 1))
	run(imported, "import", "-input=false", "training_"+holder+".test", "default/"+name)
	if out, err := imported.try(trace(), "plan", "-detailed-exitcode", "-input=false"); err != nil {
		t.Errorf("the plan after importing the job is not empty (%v):\n%s", err, out)
	}

	switch holder {
	case "train_job":
		// A new name is a new variable of the trainer, which Trainer's API fixes.
		w.write(configWith(`{ TOKEN = var.token, OTHER = var.token }`, 3))
		plan := run(w, "plan", "-input=false")
		if !strings.Contains(plan, "must be replaced") || !strings.Contains(plan, "sensitive_env_wo_names") {
			t.Errorf("a new write-only name does not plan a replacement naming sensitive_env_wo_names:\n%s", plan)
		}
	case "runtime":
		cluster := newWorkspace(t)
		cluster.write(strings.Replace(config(1), `  namespace                = "default"`+"\n", "", 1))
		out, err := cluster.try(trace(), "plan", "-input=false")
		if err == nil || !strings.Contains(flat(out), "Give the runtime a namespace") {
			t.Errorf("a ClusterTrainingRuntime with write-only variables is not refused at plan (%v):\n%s", err, out)
		}
	}

	run(w, "destroy", "-auto-approve", "-input=false")
	if _, err := a.kube.CoreV1().Secrets("default").Get(ctx, jobs.WriteOnlyEnvSecret(name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("destroy left the job's write-only Secret (%v)", err)
	}
	if !strings.Contains(logs.String(), "[TRACE]") || !strings.Contains(logs.String(), "CREATE Secret default/"+jobs.WriteOnlyEnvSecret(name)) {
		t.Fatal("the output is not the TRACE log of this provider's work the test means to check")
	}
	for _, v := range []string{first, second} {
		if strings.Contains(logs.String(), v) || strings.Contains(string(state), v) || strings.Contains(planJSON, v) {
			t.Errorf("a write-only value is in a log, the state or the plan's JSON")
		}
	}
}
