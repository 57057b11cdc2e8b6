package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// TestAccRealNode_trainJobOnATorchRuntimeTrainsOnTwoNodes: a TrainJob of 2 nodes on a torch
// runtime made in the same configuration; torchrun on each node meets the other as Trainer tells
// it (PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR), the program trains at world size 2 to its last
// step, and the job reads SUCCEEDED.
func TestAccRealNode_trainJobOnATorchRuntimeTrainsOnTwoNodes(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
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
`, name, node.Images[cluster.ImageTraining], cluster.TrainingProgramsDir, onRealNode)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{Config: config, Check: a.completedAt(t, jobs.Train.PodSelector(name), 2, 10)},
			a.succeeded(t, jobs.Train, name, "training_train_job.test"),
		},
	})
}
