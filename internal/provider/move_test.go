package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A moved block takes a training_pytorch_job's state to a training_train_job: a PyTorchJob that
// sets what a TrainJob cannot say (host_ipc) refuses the move and names it; a plain one moves, its
// plan says that it becomes a TrainJob and replaces it, and the apply leaves the TrainJob in the
// cluster and the PyTorchJob gone, with nothing more to plan.
func TestAccMove_aPyTorchJobMovesToATrainJobOrSaysWhatItCannotCarry(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	plain, ipc := "tf-acc-mv-"+suffix, "tf-acc-mvipc-"+suffix
	pytorch := func(label, name, extra string) string {
		return fmt.Sprintf(`
resource "training_pytorch_job" %[1]q {
  name         = %[2]q
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 1
  gpus         = 1
  tolerations  = ["gpu_node"]
%[3]s}
`, label, name, extra)
	}
	trainJob := func(label, name string) string {
		return fmt.Sprintf(`
moved {
  from = training_pytorch_job.%[1]s
  to   = training_train_job.%[1]s
}

resource "training_train_job" %[1]q {
  name        = %[2]q
  runtime     = "torch-distributed"
  image       = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command     = ["torchrun", "/workspace/train.py"]
  num_nodes   = 2
  gpus        = 1
  tolerations = ["gpu_node"]
  wait_for    = "created"
}
`, label, name)
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.PyTorch, plain, ipc)
		namedJobsGone(t, a, jobs.Train, plain)
	})
	w.write(providerConfig() + pytorch("plain", plain, "") + pytorch("ipc", ipc, "  host_ipc     = true\n"))
	w.run("apply", "-auto-approve", "-input=false")

	w.write(providerConfig() + trainJob("plain", plain) + trainJob("ipc", ipc))
	out, err := w.try(nil, "plan", "-input=false")
	if plan := flat(out); err == nil || !strings.Contains(plan, "Cannot move training_pytorch_job to training_train_job") ||
		!strings.Contains(plan, "The PyTorchJob sets host_ipc, which a TrainJob has no attribute for") {
		t.Errorf("the move of a PyTorchJob with host_ipc was not refused, naming it (%v):\n%s", err, plan)
	}

	w.write(providerConfig() + trainJob("plain", plain) + pytorch("ipc", ipc, "  host_ipc     = true\n"))
	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []string{
		"PyTorchJob default/" + plain + " becomes a TrainJob",
		"(moved from training_pytorch_job.plain)",
		"Replacing running job default/" + plain + " starts its training from the beginning",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	w.run("apply", "-auto-approve", "-input=false")
	if obj, err := a.get(jobs.PyTorch.GVR, "default", plain); err == nil && obj != nil {
		t.Errorf("the moved PyTorchJob is still there")
	}
	if _, err := a.get(jobs.Train.GVR, "default", plain); err != nil {
		t.Errorf("no TrainJob was made in the PyTorchJob's place: %v", err)
	}
	w.planIsEmpty()
}

// The CLIs (Terraform since 1.8, OpenTofu) send a moved block's state to the TrainJob resource
// (MoveResourceState): the move applies, the PyTorchJob is gone, and the next plan is empty. The
// CLI lanes run this test under each CLI.
func TestAccMove_eachCLIMovesAPyTorchJobsState(t *testing.T) {
	a := newAPI(t)
	name := "tf-acc-mvcli-" + acctest.RandString(6)
	pytorch := fmt.Sprintf(`
resource "training_pytorch_job" "job" {
  name         = %q
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 1
  tolerations  = ["gpu_node"]
}
`, name)
	trainJob := fmt.Sprintf(`
moved {
  from = training_pytorch_job.job
  to   = training_train_job.job
}

resource "training_train_job" "job" {
  name        = %q
  runtime     = "torch-distributed"
  image       = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command     = ["torchrun", "/workspace/train.py"]
  num_nodes   = 2
  tolerations = ["gpu_node"]
  wait_for    = "created"
}
`, name)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{Config: providerConfig() + pytorch},
			{Config: providerConfig() + trainJob, Check: func(*terraform.State) error {
				if obj, err := a.get(jobs.PyTorch.GVR, "default", name); err == nil && obj != nil {
					return fmt.Errorf("the moved PyTorchJob is still there")
				}
				return nil
			}},
		},
	})
}
