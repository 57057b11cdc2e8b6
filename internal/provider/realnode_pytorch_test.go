package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// TestAccRealNode_pytorchJobTrainsToCompletionAsTrainingOperatorTellsIt: a static PyTorchJob (a
// master and one worker) runs torchrun as its docs say, meeting at the master address
// training-operator gives; the program trains at the world size training-operator gives (2),
// completes, and the job reads SUCCEEDED.
func TestAccRealNode_pytorchJobTrainsToCompletionAsTrainingOperatorTellsIt(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-pt")
	config := providerConfig() + fmt.Sprintf(`
resource "training_pytorch_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["torchrun", "%[3]s/elastic_train.py", "--checkpoint=/tmp", "--steps=20", "--step-seconds=0"]
  worker_count = 1
  clean_pod_policy = "None"
%[4]s
}
`, name, node.Images[images.Training], images.ProgramsDir, onRealNode)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.PyTorch, name),
		Steps: []resource.TestStep{
			{Config: config, Check: a.completedAt(t, jobs.PyTorch.PodSelector(name), 2, 20)},
			a.succeeded(t, jobs.PyTorch, name, "training_pytorch_job.test"),
		},
	})
}

// TestAccRealNode_elasticPyTorchJobRescalesInPlaceAndTheProgramSeesIt: an elastic PyTorchJob
// (c10d on the first worker) trains at 2 workers, is scaled up to 3 and down to 1 in place, and
// the running program goes on at each new world size from its last checkpoint. Nothing but the
// bounds is set (besides where it runs and its checkpoint's volume): the defaults alone, torchrun's
// max_restarts among them, carry the training through a scale-down.
func TestAccRealNode_elasticPyTorchJobRescalesInPlaceAndTheProgramSeesIt(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-ept")
	claim, _ := a.sharedVolume(t, name)
	config := func(workers int) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_pytorch_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["torchrun", "%[3]s/elastic_train.py", "--checkpoint=/checkpoint", "--step-seconds=0.2"]
  worker_count = %[4]d
  data_volumes = ["%[5]s:/checkpoint"]
  elastic      = { min_workers = 1, max_workers = 3 }
%[6]s
}
`, name, node.Images[images.Training], images.ProgramsDir, workers, claim, onRealNode)
	}
	inPlace := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("training_pytorch_job.test", plancheck.ResourceActionUpdate),
	}}
	selector := jobs.PyTorch.PodSelector(name)
	var seen []event
	trainedAt := func(size, previous int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			events := a.waitEvents(t, selector, 4*time.Minute, fmt.Sprintf("training at %d workers", size), trainsAt(size))
			seen = append(seen, events...)
			if previous == 0 {
				return nil
			}
			now, before := summarize(events, size), summarize(seen, previous)
			if now.minResumed <= 0 || now.minResumed < before.lastStep {
				return fmt.Errorf("at %d workers a rank resumed from step %d, after the training at %d workers had reached step %d", size, now.minResumed, previous, before.lastStep)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.PyTorch, name),
		Steps: []resource.TestStep{
			{Config: config(2), Check: trainedAt(2, 0)},
			{Config: config(3), ConfigPlanChecks: inPlace, Check: trainedAt(3, 2)},
			{Config: config(1), ConfigPlanChecks: inPlace, Check: trainedAt(1, 3)},
		},
	})
}
