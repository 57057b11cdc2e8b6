package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// TestAccRealNode_queuedJobStartsItsProgramWhenKueueAdmitsIt: an MPI job submitted to a queue
// that admits nothing new (stop_policy Hold) is QUEUED and starts nothing; when the queue lets it
// in (an in-place apply of the ClusterQueue), Kueue admits it and its program runs. (A quota too
// small for it would never admit it: that fails the plan.)
func TestAccRealNode_queuedJobStartsItsProgramWhenKueueAdmitsIt(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-q")
	job := name + "-job"
	config := func(stopPolicy string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_resource_flavor" "real" {
  name        = "%[1]s-real"
  node_labels = { %[2]q = "true" }
  tolerations = [%[3]q]
}

resource "training_cluster_queue" "team" {
  name        = "%[1]s-team"
  stop_policy = %[4]q
  resource_group {
    covered_resources = ["cpu"]
    flavor {
      name = training_resource_flavor.real.name
      resource {
        name          = "cpu"
        nominal_quota = "1"
      }
    }
  }
}

resource "training_local_queue" "team" {
  name          = %[1]q
  cluster_queue = training_cluster_queue.team.name
}

resource "training_mpi_job" "test" {
  name         = %[5]q
  image        = %[6]q
  command      = ["mpirun", "python3", "%[7]s/mpi_allreduce.py"]
  worker_count = 1
  cpu          = "500m"
  queue_name   = training_local_queue.team.name
  wait_for     = "created"
%[8]s
}
`, name, realnode.Label, realnode.Taint, stopPolicy, job, node.Images[images.Training], images.ProgramsDir, onRealNode)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: config("Hold"), Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("training_mpi_job.test", "status", jobs.Queued),
				func(*terraform.State) error {
					if pods := a.pods("default", jobs.MPI.PodSelector(job)); len(pods) > 0 {
						return fmt.Errorf("a queued job has %d pods", len(pods))
					}
					return nil
				})},
			{Config: config("None"), Check: func(*terraform.State) error {
				launcher := jobs.MPI.PodSelector(job) + "," + jobs.JobRoleLabel + "=launcher"
				events := a.waitEvents(t, launcher, 3*time.Minute, "the admitted job's allreduce", func(events []event) bool {
					return len(events) > 0
				})
				if e := events[0]; e.Event != "allreduce" || e.WorldSize != 1 || e.Sum != 1 {
					return fmt.Errorf("the admitted job's program printed %+v, want an allreduce of 1 rank", e)
				}
				return nil
			}},
		},
	})
}
