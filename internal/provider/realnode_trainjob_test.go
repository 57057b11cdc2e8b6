package provider

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// TestAccRealNode_trainJobOnATorchRuntimeTrainsOnTwoNodes: a TrainJob of 2 nodes on a torch
// runtime made in the same configuration; torchrun on each node meets the other as Trainer tells
// it (PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR), the program trains at world size 2 to its last
// step, and the job reads SUCCEEDED.
func TestAccRealNode_trainJobOnATorchRuntimeTrainsOnTwoNodes(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-tj")
	config := providerConfig() + fmt.Sprintf(`
resource "training_runtime" "torch" {
  name      = "%[1]s-rt"
  framework = "torch"
  image     = %[2]q
  command   = ["torchrun", "%[3]s/elastic_train.py"]
}

resource "training_train_job" "test" {
  name      = %[1]q
  runtime   = training_runtime.torch.name
  image     = %[2]q
  command   = ["torchrun", "%[3]s/elastic_train.py", "--checkpoint=/tmp", "--steps=10", "--step-seconds=0"]
  num_nodes = 2
%[4]s
}
`, name, node.Images[images.Training], images.ProgramsDir, onRealNode)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{Config: config, Check: a.completedAt(t, jobs.Train.PodSelector(name), 2, 10)},
			a.succeeded(t, jobs.Train, name, "training_train_job.test"),
		},
	})
}

// TestAccRealNode_trainJobOnAnMPIRuntimeRunsMpirunOverTrainersHostfile: a TrainJob of 2 nodes on
// an MPI runtime made in the same configuration with its defaults; the launcher's mpirun reaches
// both nodes over SSH through the hostfile and keys Trainer made, and the allreduce's sum proves
// both took part. The runtime's former default (root, keys in /root/.ssh) failed here: Trainer
// mounts the private key 0640 and the root launcher's ssh refused it ("Failed password for root"
// in the nodes' logs, mpirun exit 255).
func TestAccRealNode_trainJobOnAnMPIRuntimeRunsMpirunOverTrainersHostfile(t *testing.T) {
	node := realNode(t)
	mpirunOverTrainersHostfile(t, node.Images[images.Training])
}

// Under Open MPI 5 the same: Trainer names its hostfile for Open MPI 4 alone, and the launcher's
// mpirun reads it by the name the provider adds (without it, prterun ran both ranks on the
// launcher).
func TestAccRealNode_trainJobOnAnOpenMPI5RuntimeRunsMpirunOverTrainersHostfile(t *testing.T) {
	node := realNode(t)
	mpirunOverTrainersHostfile(t, node.Images[images.TrainingOpenMPI5])
}

func mpirunOverTrainersHostfile(t *testing.T, image string) {
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-tjm")
	config := providerConfig() + fmt.Sprintf(`
resource "training_runtime" "mpi" {
  name      = "%[1]s-rt"
  framework = "mpi"
  image     = %[2]q
  command   = ["mpirun", "python3", "%[3]s/mpi_allreduce.py"]
  mpi = {}
}

resource "training_train_job" "test" {
  name      = %[1]q
  runtime   = training_runtime.mpi.name
  num_nodes = 2
%[4]s
}
`, name, image, images.ProgramsDir, onRealNode)
	launcher := jobs.Train.PodSelector(name) + "," + jobs.ReplicatedJobLabel + "=launcher"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{Config: config, Check: func(*terraform.State) error {
				events := a.waitEvents(t, launcher, 3*time.Minute, "the allreduce over Trainer's hostfile", func(events []event) bool {
					return len(events) > 0
				})
				want := []string{name + "-node-0-0", name + "-node-0-1"}
				if e := events[0]; e.Event != "allreduce" || e.WorldSize != 2 || e.Sum != 3 || !slices.Equal(e.Hosts, want) {
					return fmt.Errorf("the launcher's program printed %+v, want an allreduce of 2 ranks (sum 3) on %v", e, want)
				}
				return nil
			}},
			a.succeeded(t, jobs.Train, name, "training_train_job.test"),
		},
	})
}
