package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kubetrain/terraform-provider-training/cluster"
)

// TestAccRealNode_createFailsFastOnWhatOnlyTheKubeletKnows: an image that cannot be pulled, a
// Secret that does not exist and a command that does not exist each end the create with the pod,
// the container and the kubelet's reason, long before the create timeout (which would only warn);
// the failed job is in state, tainted, and the next apply replaces it with one that runs.
func TestAccRealNode_createFailsFastOnWhatOnlyTheKubeletKnows(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tfacc-ff")
	image := node.Images[cluster.ImageTraining]
	config := func(image, extra string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["mpirun", "python3", "%[3]s/mpi_allreduce.py"]
  worker_count = 1
%[4]s
%[5]s
  timeouts {
    create = "4m"
  }
}
`, name, image, cluster.TrainingProgramsDir, onRealNode, extra)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: config("kubetrain.local/no-such-image:1", ""),
				ExpectError: regexp.MustCompile(`pod\s+` + name + `-\S+:\s+container\s+\S+:\s+ImagePullBackOff`)},
			{Config: config(image, `  env_secret = { TOKEN = { secret = "no-such-secret", key = "token" } }`),
				ExpectError: regexp.MustCompile(`CreateContainerConfigError:\s+secret\s+"no-such-secret"\s+not\s+found`)},
			{Config: config(image, `  worker_command = ["no-such-program"]`),
				ExpectError: regexp.MustCompile(`container\s+worker:\s+(StartError|RunContainerError|CrashLoopBackOff):[\s\S]*no-such-program`)},
			{Config: config(image, "")},
		},
	})
}
