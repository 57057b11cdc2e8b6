package provider

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A plain mpirun job on an image with Open MPI 5 (Debian 13's 5.0.7: PRRTE, whose daemons are
// prted and which has no setting to delay the ranks' kill), whose program saves only when it is
// told to stop, to the folder TRAINING_CHECKPOINT_PATH names (which mpirun must pass on to the
// ranks), rescaled from 2 to 3 workers, which replaces it. mpi-operator names its hostfile only
// for Open MPI 4: the run of one rank on each worker proves the launcher found it. The ranks save
// at the stop, with the 2 of the old run, at least the step they had reached, and the new run of
// 3 resumes there: the stop reached every rank before PRRTE's daemons could kill them.
func TestAccRealNode_anOpenMPI5JobSavesAtItsStopAndItsReplacementResumes(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, dir := a.sharedVolume(t, "ompi5-"+suffix)
	name := "tfacc-ompi5-" + suffix
	config := func(workers int) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["mpirun", "python3", "%[3]s/mpi_checkpoint.py", "--save-seconds", "3"]
  worker_count = %[4]d
  data_volumes = ["%[5]s:/ckpt"]
  checkpoint   = { path = "/ckpt/run", save_seconds = 5 }
%[6]s
}
`, name, node.Images[images.TrainingOpenMPI5], images.ProgramsDir, workers, claim, onRealNode)
	}

	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.MPI, name)
	})
	w.write(config(2))
	w.run("apply", "-auto-approve", "-input=false")
	mpiStarted(t, a, name, 2)
	before := mpiStepped(t, a, name, 0)

	w.write(config(3))
	out := flat(w.run("apply", "-auto-approve", "-input=false"))
	if want := "default/" + name + " stopped within its grace"; !strings.Contains(out, want) {
		t.Errorf("the apply does not say %q:\n%s", want, out)
	}
	saved := readSaved(t, filepath.Join(dir, "run", "state.json"))
	if saved.WorldSize != 2 || saved.Step < before {
		t.Errorf("the checkpoint saved at the stop: step %d of %d ranks; want a step of 2 ranks, at least %d", saved.Step, saved.WorldSize, before)
	}
	if s := mpiStarted(t, a, name, 3); s.ResumedFrom != saved.Step {
		t.Errorf("the new run resumed from step %d; the stop saved step %d", s.ResumedFrom, saved.Step)
	}
}
