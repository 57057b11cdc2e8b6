package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A TrainJob on an MPI runtime, both declaring a checkpoint of 20 seconds, whose program saves
// only when told to stop and takes 15 seconds to: rescaled from 2 to 3 nodes, which replaces it,
// the stop passes through mpirun's daemons (which wait the save once before they signal the
// ranks), so the pods need twice the save and 10 seconds. The TrainJob's grace, which replaces
// its runtime's, gives them that: the save completes at the replacement and the new run of 3
// ranks resumes from it. (With the job's own save and 10 seconds, the kubelet killed the ranks
// while they saved.)
func TestAccRealNode_aTrainJobOnAnMPIRuntimeSavesAtItsReplacementAndResumes(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-tjckpt")
	claim, dir := a.sharedVolume(t, name)
	// The runtime's ranks run as its MPI user (1000), not as root: the folder must let them save.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	config := func(nodes int) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_runtime" "mpi" {
  name         = "%[1]s-rt"
  framework    = "mpi"
  image        = %[2]q
  command      = ["mpirun", "python3", "%[3]s/mpi_checkpoint.py", "--checkpoint", "/ckpt/state.json", "--save-seconds", "15"]
  data_volumes = ["%[4]s:/ckpt"]
  checkpoint   = { path = "/ckpt", save_seconds = 20 }
  mpi          = {}
}

resource "training_train_job" "test" {
  name         = %[1]q
  runtime      = training_runtime.mpi.name
  num_nodes    = %[5]d
  data_volumes = ["%[4]s:/ckpt"]
  checkpoint   = { path = "/ckpt", save_seconds = 20 }
%[6]s
}
`, name, node.Images[images.Training], images.ProgramsDir, claim, nodes, onRealNode)
	}
	launcher := jobs.Train.PodSelector(name) + "," + jobs.ReplicatedJobLabel + "=launcher"
	started := func(world int) event {
		events := a.waitEvents(t, launcher, 3*time.Minute, fmt.Sprintf("the run of %d ranks starting", world), func(events []event) bool {
			return len(eventsOf(events, "start")) > 0
		})
		s := eventsOf(events, "start")[0]
		if s.WorldSize != world {
			t.Errorf("the run started with %d ranks, want %d", s.WorldSize, world)
		}
		return s
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.Train, name)
	})
	w.write(config(2))
	w.run("apply", "-auto-approve", "-input=false")
	started(2)
	reached := lastStep(a.waitEvents(t, launcher, 3*time.Minute, "stepping", func(events []event) bool { return lastStep(events) >= 3 }))

	w.write(config(3))
	plan := flat(w.run("plan", "-input=false"))
	if want := "Replacing running job default/" + name + ": its training stops to resume from its checkpoint"; !strings.Contains(plan, want) {
		t.Errorf("the plan does not say %q:\n%s", want, plan)
	}
	if want := "given 50 seconds to save to /ckpt"; !strings.Contains(plan, want) {
		t.Errorf("the plan does not say %q:\n%s", want, plan)
	}
	out := flat(w.run("apply", "-auto-approve", "-input=false"))
	if want := "default/" + name + " stopped within its grace"; !strings.Contains(out, want) {
		t.Errorf("the apply does not say %q:\n%s", want, out)
	}
	saved := readSaved(t, filepath.Join(dir, "state.json"))
	if saved.WorldSize != 2 || saved.Step < reached {
		t.Errorf("the stop saved step %d of %d ranks; want a step of 2 ranks, at least %d", saved.Step, saved.WorldSize, reached)
	}
	if s := started(3); s.ResumedFrom != saved.Step {
		t.Errorf("the new run resumed from step %d; the stop saved step %d", s.ResumedFrom, saved.Step)
	}
}
