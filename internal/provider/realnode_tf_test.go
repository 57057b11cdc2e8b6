package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// TestAccRealNode_tfJobTasksReachEveryTaskTheirTFConfigNames: a TFJob with a chief, two workers
// and a parameter server on the real node; each task parses the TF_CONFIG training-operator gave
// it and connects to every task it lists, by the names given there. TensorFlow is not in Debian:
// this proves the cluster spec and the names (Services, DNS, ports), not TensorFlow itself.
func TestAccRealNode_tfJobTasksReachEveryTaskTheirTFConfigNames(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-tf")
	config := providerConfig() + fmt.Sprintf(`
resource "training_tf_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["python3", "%[3]s/tf_config_check.py"]
  worker_count = 2
  ps_count     = 1
  chief        = true
%[4]s
}
`, name, node.Images[images.Training], images.ProgramsDir, onRealNode)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.TF, name),
		Steps: []resource.TestStep{
			{Config: config, Check: func(*terraform.State) error {
				const tasks = 4
				events := a.waitEvents(t, jobs.TF.PodSelector(name), 3*time.Minute, "every task reaching every task", func(events []event) bool {
					return len(events) == tasks
				})
				for _, e := range events {
					if len(e.Tasks) != tasks || len(e.Reached) != tasks {
						return fmt.Errorf("%s %d: TF_CONFIG lists %v, reached %v: want %d tasks, all reached", e.Task, e.Index, e.Tasks, e.Reached, tasks)
					}
				}
				return nil
			}},
			a.succeeded(t, jobs.TF, name, "training_tf_job.test"),
		},
	})
}
