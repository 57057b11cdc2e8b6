package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// An MPIJob made with kubectl carries a credential inline in its env. Brought under Terraform
// with `-generate-config-out`, its value shows in neither the plan, the generated configuration
// nor the state's plan output: an import takes every inline variable of a job made elsewhere as
// sensitive. The configuration that then says the variable plainly (`env`) changes the job in
// place, touching no pod: the job keeps its UID and its worker's template; the next plan is empty.
func TestAccImport_aJobMadeElsewhereNeverShowsAnInlineValue(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.5.0", "import blocks")
	t.Parallel()
	ns := a.namespace("tf-acc-import-env", nil)
	value := "inline-" + acctest.RandString(24)
	made := kubectlCreate(t, a, jobs.MPI, ns, fmt.Sprintf(`
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: creds}
spec:
  slotsPerWorker: 1
  runPolicy: {suspend: true}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - {name: mpi-launcher, image: mpioperator/mpi-pi:openmpi, command: [mpirun, /home/mpiuser/pi], env: [{name: TOKEN, value: %q}]}
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - {name: mpi-worker, image: mpioperator/mpi-pi:openmpi, command: [/usr/sbin/sshd, -De], env: [{name: TOKEN, value: %[1]q}]}
`, value))
	before, err := a.get(jobs.MPI.GVR, ns, "creds")
	if err != nil {
		t.Fatal(err)
	}

	w := newWorkspace(t)
	w.write(providerConfig() + fmt.Sprintf("import {\n  to = training_mpi_job.creds\n  id = \"%s/creds\"\n}\n", ns))
	out := w.run("plan", "-input=false", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(w.dir, "generated.tf"))
	if err != nil {
		t.Fatalf("no generated configuration: %v\n%s", err, out)
	}
	if strings.Contains(out+string(generated), value) {
		t.Fatalf("the inline value shows in the plan or the generated configuration:\n%s\n%s", out, generated)
	}
	sensitiveLine := regexp.MustCompile(`(?m)^\s*sensitive_env\s*=.*$`)
	if !sensitiveLine.Match(generated) {
		t.Fatalf("the generated configuration has no sensitive_env:\n%s", generated)
	}
	// The team writes the variable as it likes it, plainly.
	config := regexp.MustCompile(`(?m)^\s*env\s*=\s*null\s*$`).ReplaceAllString(string(generated), "")
	config = sensitiveLine.ReplaceAllString(config, fmt.Sprintf("  env = { TOKEN = %q }", value))
	if err := os.WriteFile(filepath.Join(w.dir, "generated.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	plan := w.run("plan", "-input=false")
	if !strings.Contains(plan, "1 to import, 0 to add, 1 to change, 0 to destroy") || strings.Contains(plan, "forces replacement") {
		t.Fatalf("moving the imported variable to env is not an in-place change:\n%s\n--- configuration:\n%s", plan, config)
	}
	w.run("apply", "-auto-approve", "-input=false")
	w.planIsEmpty()
	after, err := a.get(jobs.MPI.GVR, ns, "creds")
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != made[0].uid {
		t.Fatalf("the job was replaced (UID %s, was %s)", after.GetUID(), made[0].uid)
	}
	worker := func(obj map[string]any) string {
		w, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "mpiReplicaSpecs", "Worker")
		return fmt.Sprint(w)
	}
	if worker(before.Object) != worker(after.Object) {
		t.Errorf("the worker's template changed:\n%s\n%s", worker(before.Object), worker(after.Object))
	}
}
