package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// TestAccRealNode_waitForTheEndReturnsTheResult: a pipeline's training step. With wait_for =
// "succeeded" the apply of a program that runs to its end returns once it has, with the job
// SUCCEEDED; a program that exits 3 fails the apply, naming the pod and the exit code.
func TestAccRealNode_waitForTheEndReturnsTheResult(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-end")
	config := func(command string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = %[3]s
  worker_count = 1
  wait_for     = "succeeded"
%[4]s
  timeouts {
    create = "6m"
  }
}
`, name, node.Images[images.Training], command, onRealNode)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: config(fmt.Sprintf(`["mpirun", "python3", "%s/mpi_allreduce.py"]`, images.ProgramsDir)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Succeeded)),
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("completion_time"), knownvalue.NotNull()),
				},
			},
			{
				Config:      config(`["python3", "-c", "import sys; print('loss is nan at step 12'); sys.exit(3)"]`),
				ExpectError: regexp.MustCompile(`pod\s+` + name + `-launcher-\S+[\s\S]*exited\s+with\s+code\s+3[\s\S]*loss\s+is\s+nan`),
			},
		},
	})
}
