package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A TrainJob's grace replaces that of every pod its runtime makes, so it covers the runtime's
// stop: on an MPI runtime whose checkpoint saves for 20 seconds (a grace of twice that and 10), a
// TrainJob saving for 5 gets 50 seconds, not the 15 its own save would need elsewhere, and the
// plan warns that the two saves differ. A grace set shorter is refused at plan. A runtime made by
// the same apply leaves the grace to the create, which reads the runtime and gives the same.
func TestAccCheckpoint_aTrainJobsGraceCoversItsRuntimesStop(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tf-acc-tjg")
	runtime := func(rt string) string {
		return fmt.Sprintf(`
resource "training_runtime" %[1]q {
  name         = "%[2]s-%[1]s"
  framework    = "mpi"
  image        = "mpioperator/mpi-pi:openmpi"
  command      = ["mpirun", "python3", "/train.py"]
  data_volumes = ["checkpoints:/ckpt"]
  mpi          = {}
  checkpoint   = { path = "/ckpt/run", save_seconds = 20 }
}
`, rt, name)
	}
	job := func(rt, extra string) string {
		return fmt.Sprintf(`
resource "training_train_job" "test" {
  name         = %[1]q
  runtime      = training_runtime.%[2]s.name
  num_nodes    = 2
  data_volumes = ["checkpoints:/ckpt"]
  checkpoint   = { path = "/ckpt/run", save_seconds = 5 }
  wait_for     = "created"
%[3]s}
`, name, rt, extra)
	}
	graceOf := func() int64 {
		t.Helper()
		obj, err := a.get(jobs.Train.GVR, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := jobs.ReadTrainJob(obj)
		if err != nil || s.Pod.TerminationGracePeriod == nil {
			t.Fatalf("the TrainJob's grace cannot be read (%v): %v", err, obj.Object["spec"])
		}
		return *s.Pod.TerminationGracePeriod
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.Train, name)
	})
	w.write(providerConfig() + runtime("a"))
	w.run("apply", "-auto-approve", "-input=false")

	// The runtime is on the cluster: the plan reads it and decides.
	w.write(providerConfig() + runtime("a") + job("a", ""))
	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []string{
		"+ termination_grace_period_seconds = 50",
		"The job's save and its runtime's differ",
		"checkpoint.save_seconds is 5, and ClusterTrainingRuntime " + name + "-a declares a save of 20 seconds",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	w.run("apply", "-auto-approve", "-input=false")
	if got := graceOf(); got != 50 {
		t.Errorf("the TrainJob gives its runtime's pods %d seconds, want 50", got)
	}
	w.planIsEmpty()

	// Set shorter than the runtime's stop: refused at plan.
	w.write(providerConfig() + runtime("a") + job("a", "  termination_grace_period_seconds = 30\n"))
	out, err := w.try(nil, "plan", "-input=false")
	if err == nil || !wrapped(`Grace too short for the job's runtime.*termination_grace_period_seconds \(30\).*shorter than the 50 seconds`).MatchString(out) {
		t.Errorf("a grace shorter than the runtime's stop was not refused at plan (%v):\n%s", err, out)
	}

	// A runtime made by the same apply: known after apply, then the same.
	w.write(providerConfig() + runtime("a"))
	w.run("apply", "-auto-approve", "-input=false")
	w.write(providerConfig() + runtime("a") + runtime("b") + job("b", ""))
	plan = flat(w.run("plan", "-input=false"))
	if !regexp.MustCompile(`\+ termination_grace_period_seconds = \(known after apply\)`).MatchString(plan) {
		t.Errorf("the plan does not leave the grace to the apply:\n%s", plan)
	}
	w.run("apply", "-auto-approve", "-input=false")
	if got := graceOf(); got != 50 {
		t.Errorf("the TrainJob made with its runtime gives its pods %d seconds, want 50", got)
	}
	if got := showState(t, w)["training_train_job.test"]["termination_grace_period_seconds"]; got != float64(50) {
		t.Errorf("the state's grace is %v, want 50", got)
	}
	w.planIsEmpty()
}
