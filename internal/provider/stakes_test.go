package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A plan that stops a running job says what it costs, from the job's start time and its GPUs
// (two workers of one GPU, started 36 hours ago: 72 accelerator-hours); the same figure is in the
// plan's JSON, where a policy refuses the costly replacements and lets a finished job's through;
// protect_running fails the plan that would replace or destroy a running job, names what forces
// it, lets a finished job be replaced, and gives way when it is turned off in the same apply.
func TestAccStakes_aPlanThatStopsARunningJobSaysWhatItCostsAndProtectRunningRefusesIt(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	open, guarded, done := "tf-acc-open-"+suffix, "tf-acc-guarded-"+suffix, "tf-acc-done-"+suffix
	config := func(image string, protect bool) string {
		out := providerConfig()
		for _, j := range []struct {
			label, name string
			protect     bool
		}{{"open", open, false}, {"guarded", guarded, protect}, {"done", done, protect}} {
			out += fmt.Sprintf(`
resource "training_mpi_job" %q {
  name            = %q
  image           = %q
  command         = ["mpirun", "python", "/train.py"]
  worker_count    = 2
  gpus            = 1
  tolerations     = ["gpu_node"]
  protect_running = %t
}
`, j.label, j.name, image, j.protect)
		}
		return out
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.write(config("registry.example/horovod:0.13.11", false))
		w.run("apply", "-auto-approve", "-input=false")
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.MPI, open, guarded, done)
	})
	w.write(config("registry.example/horovod:0.13.11", true))
	w.run("apply", "-auto-approve", "-input=false")
	started := time.Now().Add(-36 * time.Hour).UTC().Format(time.RFC3339)
	for _, name := range []string{open, guarded} {
		patch := fmt.Sprintf(`{"status":{"startTime":%q}}`, started)
		if _, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Patch(context.Background(), name, k8stypes.MergePatchType, []byte(patch),
			metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	a.finishMPIJob(done)

	// A new image replaces all three: the guarded running job fails the plan, the finished one
	// does not, and the open one is told what it stops.
	w.write(config("registry.example/horovod:0.13.12", true))
	out, err := w.try(nil, "plan", "-input=false")
	plan := flat(out)
	if err == nil {
		t.Fatalf("the plan that replaces a protected running job did not fail:\n%s", plan)
	}
	for _, want := range []string{
		"Running job default/" + guarded + " is protected from replacement",
		"a change of image replaces it",
		"It holds 2 nvidia.com/gpu on 3 pods and has run for 36h",
		"Replacing running job default/" + open + " starts its training from the beginning",
		"those hours of training are lost",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, done+" is protected") {
		t.Errorf("the plan refuses to replace the finished job:\n%s", plan)
	}

	// Turned off in the same apply, the guard gives way; the plan's JSON has what each replaced
	// job held, and a policy refuses the costly ones.
	w.write(config("registry.example/horovod:0.13.12", false))
	w.run("plan", "-input=false", "-out=replace.tfplan")
	var show struct {
		ResourceChanges []struct {
			Address string
			Change  struct {
				Actions []string
				Before  map[string]any
			}
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(w.run("show", "-json", "replace.tfplan")), &show); err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, rc := range show.ResourceChanges {
		hours, _ := rc.Change.Before["accelerator_hours"].(float64)
		if slices.Equal(rc.Change.Actions, []string{"delete", "create"}) && hours > 50 {
			refused = append(refused, rc.Address)
		}
		if rc.Address != "training_mpi_job.done" && (hours < 72 || hours > 72.5) {
			t.Errorf("%s held %v accelerator-hours before the change; want 2 GPUs for 36 hours, 72", rc.Address, hours)
		}
	}
	if want := []string{"training_mpi_job.guarded", "training_mpi_job.open"}; !slices.Equal(refused, want) {
		t.Errorf("the policy refused %v; want the running jobs %v", refused, want)
	}
	_ = os.Remove(filepath.Join(w.dir, "replace.tfplan"))

	// Destroy, with the guard on in state: refused for the running protected job; the open one is
	// told what stops.
	w.write(config("registry.example/horovod:0.13.11", true))
	out, err = w.try(nil, "plan", "-destroy", "-input=false")
	plan = flat(out)
	if err == nil || !strings.Contains(plan, "Running job default/"+guarded+" is protected from destroy") {
		t.Errorf("the destroy of a protected running job was not refused (%v):\n%s", err, plan)
	}
	for _, want := range []string{"Destroying running job default/" + open + " stops its training", "It declares no checkpoint: those hours of training are lost"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the destroy plan does not say %q:\n%s", want, plan)
		}
	}
}
