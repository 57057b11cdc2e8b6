package provider

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
)

// A plain mpirun over SSH (mpi-operator's hostfile, its SSH keys, the workers' sshd) running an
// mpi4py allreduce on the real node, with a variable that every rank reports.
func realMPIJobConfig(name, image string, workers int) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["mpirun", "python3", "%[3]s/mpi_allreduce.py"]
  worker_count = %[4]d
  env          = { TRAINING_RUN = "run-%[1]s" }
%[5]s
}
`, name, image, images.ProgramsDir, workers, onRealNode)
}

// TestAccRealNode_mpiJobAllreducesOverSSHAndItsRescaleIsANewRun: mpirun reaches every worker over
// SSH and the allreduce's sum proves that every rank took part, each with the job's env (the
// ranks sshd starts had none of it before the launcher's mpirun was told to pass it on); a new worker_count replaces the
// job (the plan says so), and the new run's world size is the new count.
func TestAccRealNode_mpiJobAllreducesOverSSHAndItsRescaleIsANewRun(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-mpi")
	image := node.Images[images.Training]
	launcher := mpiLauncher(name)
	ranAt := func(size int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			events := a.waitEvents(t, launcher, 3*time.Minute, fmt.Sprintf("an allreduce of %d ranks", size), func(events []event) bool {
				for _, e := range events {
					if e.Event == "allreduce" {
						return true
					}
				}
				return false
			})
			for _, e := range events {
				if e.Event != "allreduce" {
					continue
				}
				if e.WorldSize != size || e.Sum != size*(size+1)/2 || len(e.Hosts) != size {
					return fmt.Errorf("the allreduce ran on %d ranks on hosts %v with sum %d; want %d ranks, one a worker, sum %d",
						e.WorldSize, e.Hosts, e.Sum, size, size*(size+1)/2)
				}
				for i := 0; i < size; i++ {
					if want := fmt.Sprintf("%s-worker-%d", name, i); !slices.Contains(e.Hosts, want) {
						return fmt.Errorf("worker %s took no part: hosts %v", want, e.Hosts)
					}
				}
				// The job's env reaches every rank, though each was started over SSH.
				if want := "run-" + name; len(e.Runs) != size || slices.ContainsFunc(e.Runs, func(r string) bool { return r != want }) {
					return fmt.Errorf("the ranks' TRAINING_RUN: %q, want %q on each of %d", e.Runs, want, size)
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: realMPIJobConfig(name, image, 2), Check: ranAt(2)},
			{
				Config: realMPIJobConfig(name, image, 3), Check: ranAt(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
	})
}
