package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// The seed's elastic job on the real node, with its own etcd and the default launcher (torchrun)
// and etcd image, training elastic_train.py with its checkpoint on storage its pods share. The
// image is the training image with python-etcd added on purpose: torchrun's etcd rendezvous
// imports it (the upstream PyTorch images do not ship it; the docs say so).
func realElasticJobConfig(name, image, claim string, workers int) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_elastic_job" "test" {
  name         = %[1]q
  image        = %[2]q
  script       = "%[3]s/elastic_train.py"
  script_args  = ["--checkpoint=/checkpoint", "--finish-when=/checkpoint/finish", "--step-seconds=0.2"]
  worker_count = %[4]d
  elastic  = { min_workers = 1, max_workers = 4 }
  data_volumes = ["%[5]s:/checkpoint"]
%[6]s
}
`, name, image, images.ProgramsDir, workers, claim, onRealNode+etcdOnRealNode)
}

// TestAccRealNode_elasticJobTrainsThroughRescales: the training starts at 4 workers, goes on at
// 2 and then at 3, each rescale an in-place apply, each time from the last checkpoint (never from
// step 0), as the program's own output says; it completes, the job reads SUCCEEDED, and destroy
// leaves nothing. Nothing but the bounds is set (besides where it runs and its checkpoint's
// volume): the defaults alone carry the training through a scale-down.
func TestAccRealNode_elasticJobTrainsThroughRescales(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := elasticJobName()
	claim, dir := a.sharedVolume(t, name)
	image := node.Images[images.TrainingEtcd]
	workers := jobs.Elastic.PodSelector(name) + "," + jobs.TaskRoleLabel + "=" + jobs.WorkerRole
	inPlace := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("training_elastic_job.test", plancheck.ResourceActionUpdate),
	}}
	// seen keeps every event read, so that the steps of pods a rescale removed still count.
	var seen []event
	trainedAt := func(size, previous int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			events := a.waitEvents(t, workers, 4*time.Minute, fmt.Sprintf("training at %d workers", size), trainsAt(size))
			seen = append(seen, events...)
			now := summarize(events, size)
			if now.starts < size {
				return fmt.Errorf("%d ranks started at world size %d, want %d", now.starts, size, size)
			}
			if previous == 0 {
				return nil
			}
			before := summarize(seen, previous)
			if now.minResumed <= 0 || now.minResumed < before.lastStep {
				return fmt.Errorf("at %d workers a rank resumed from step %d: the training at %d workers had reached step %d (it must go on from the last checkpoint, never from step 0)",
					size, now.minResumed, previous, before.lastStep)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: realElasticJobConfig(name, image, claim, 4), Check: trainedAt(4, 0)},
			{Config: realElasticJobConfig(name, image, claim, 2), ConfigPlanChecks: inPlace, Check: trainedAt(2, 4)},
			{Config: realElasticJobConfig(name, image, claim, 3), ConfigPlanChecks: inPlace, Check: trainedAt(3, 2)},
			{
				// The program ends its training when told to; every worker exits 0 and
				// FrameworkController completes the job.
				PreConfig: func() {
					if err := os.WriteFile(filepath.Join(dir, "finish"), nil, 0o644); err != nil {
						t.Fatal(err)
					}
					a.waitSucceeded(t, jobs.Elastic, name)
				},
				RefreshState: true,
				Check:        resource.TestCheckResourceAttr("training_elastic_job.test", "status", jobs.Succeeded),
			},
		},
	})
}
