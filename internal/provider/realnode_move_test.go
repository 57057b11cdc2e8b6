package provider

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A PyTorchJob with a checkpoint, moved to a TrainJob on a torch runtime by a moved block, the way
// off training-operator v1: the plan says the PyTorchJob becomes a TrainJob that resumes from its
// checkpoint; the apply stops the PyTorchJob, whose program saves at its stop (saves_on_stop.py),
// and the TrainJob's first run starts from the step it saved.
func TestAccRealNode_aPyTorchJobMovedToATrainJobResumesFromItsCheckpoint(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, dir := a.sharedVolume(t, "mv-"+suffix)
	name := "tfacc-mv-" + suffix
	image := node.Images[images.Training]
	program := fmt.Sprintf(`"%s/saves_on_stop.py", "--save-seconds", "3"`, images.ProgramsDir)
	pytorch := providerConfig() + fmt.Sprintf(`
resource "training_pytorch_job" "train" {
  name         = %[1]q
  image        = %[2]q
  command      = ["python3", %[3]s]
  worker_count = 1
  data_volumes = ["%[4]s:/ckpt"]
  checkpoint   = { path = "/ckpt/run", save_seconds = 5 }
%[5]s
}
`, name, image, program, claim, onRealNode)
	trainJob := providerConfig() + fmt.Sprintf(`
resource "training_runtime" "torch" {
  name      = "%[1]s-rt"
  framework = "torch"
  image     = %[2]q
  command   = ["torchrun", %[3]s]
}

moved {
  from = training_pytorch_job.train
  to   = training_train_job.train
}

resource "training_train_job" "train" {
  name         = %[1]q
  runtime      = training_runtime.torch.name
  image        = %[2]q
  command      = ["torchrun", %[3]s]
  num_nodes    = 1
  data_volumes = ["%[4]s:/ckpt"]
  checkpoint   = { path = "/ckpt/run", save_seconds = 5 }
%[5]s
}
`, name, image, program, claim, onRealNode)
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.Train, name)
		namedJobsGone(t, a, jobs.PyTorch, name)
	})
	master := jobs.PyTorch.PodSelector(name) + "," + jobs.ReplicaTypeLabel + "=master"
	w.write(pytorch)
	w.run("apply", "-auto-approve", "-input=false")
	events := a.waitEvents(t, master, 3*time.Minute, name+" stepping", func(events []event) bool { return lastStep(events) >= 3 })
	reached := lastStep(events)

	w.write(trainJob)
	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []string{
		"PyTorchJob default/" + name + " becomes a TrainJob",
		"Replacing running job default/" + name + ": its training stops to resume from its checkpoint",
		"mounts claim " + claim + " at /ckpt again and resumes from /ckpt/run",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	w.run("apply", "-auto-approve", "-input=false")
	saved := readSaved(t, filepath.Join(dir, "run", "state.json"))
	if saved.WorldSize != 2 || saved.Step < reached {
		t.Errorf("the PyTorchJob saved step %d of %d processes at its stop; want a step of 2, at least %d", saved.Step, saved.WorldSize, reached)
	}
	events = a.waitEvents(t, jobs.Train.PodSelector(name), 3*time.Minute, name+" starting as a TrainJob", func(events []event) bool {
		return len(eventsOf(events, "start")) > 0
	})
	if s := eventsOf(events, "start")[0]; s.ResumedFrom != saved.Step || s.WorldSize != 1 {
		t.Errorf("the TrainJob started at step %d of %d processes; want step %d (the PyTorchJob's save) of 1", s.ResumedFrom, s.WorldSize, saved.Step)
	}
	if obj, err := a.get(jobs.PyTorch.GVR, "default", name); err == nil && obj != nil {
		t.Errorf("the PyTorchJob is still there after the move's apply")
	}
	w.planIsEmpty()
}
