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

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A write-only variable is in neither the plan (its text or its JSON), the state nor a TRACE log
// of apply, plan, import and destroy: the apply writes it into the Secret the job owns, whose
// every key the job's pods take. A new version writes the new value into the Secret and changes
// the job in place (same UID); an import reads the version back, so its plan is empty; destroy
// removes the Secret with the job.
func TestAccWriteOnlyEnv_neverInPlanStateOrLogsAndANewVersionRewritesItsSecret(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.11.0", "write-only attributes")
	t.Parallel()
	ctx := context.Background()
	name := mpiJobName()
	first, second := "wo-first-"+acctest.RandString(24), "wo-second-"+acctest.RandString(24)
	// The value comes as a team's pipeline gives it: an ephemeral variable, from the environment.
	config := func(version int) string {
		return providerConfig() + `
variable "token" {
  type      = string
  ephemeral = true
}
` + mpiJobBlock("test", name, fmt.Sprintf(`  wait_for                 = "created"
  sensitive_env_wo         = { TOKEN = var.token }
  sensitive_env_wo_version = %d
`, version))
	}
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
		job, err := a.get(jobs.MPI.GVR, "default", name)
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
	worker, _, _ := unstructured.NestedSlice(job.Object, "spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers")
	if raw, _ := json.Marshal(worker); !strings.Contains(string(raw), `"envFrom":[{"secretRef":{"name":"`+jobs.WriteOnlyEnvSecret(name)+`"}}]`) {
		t.Errorf("the worker does not take the Secret: %s", raw)
	}
	if out, err := w.try(trace(), "plan", "-detailed-exitcode", "-input=false"); err != nil {
		t.Errorf("the plan after the apply is not empty (%v):\n%s", err, out)
	}

	// A new version: the plan says the update and its warning, in JSON too.
	w.write(config(2))
	value = second
	plan := run(w, "plan", "-input=false", "-out=tfplan")
	if !strings.Contains(plan, "0 to add, 1 to change, 0 to destroy") || !strings.Contains(plan, "keep the values they started with") {
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
	run(imported, "import", "-input=false", "training_mpi_job.test", "default/"+name)
	if out, err := imported.try(trace(), "plan", "-detailed-exitcode", "-input=false"); err != nil {
		t.Errorf("the plan after importing the job is not empty (%v):\n%s", err, out)
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
