package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// retriedProgram trains for 20 seconds, printing its steps, and exits with code 1 on its first
// three runs in its pod (counted in the shared folder), as a worker does that loses its peer or
// its storage for a moment on day three; its fourth run completes.
const retriedProgram = `import os, sys, time
runs = "/state/" + os.environ["HOSTNAME"]
n = int(open(runs).read()) if os.path.exists(runs) else 0
open(runs, "w").write(str(n + 1))
for step in range(20):
    print("run", n + 1, "step", step, flush=True)
    time.sleep(1)
if n < 3:
    print("lost the connection to the peer", flush=True)
    sys.exit(1)
print("done", flush=True)
`

// TestAccRealNode_aWorkerTheOperatorRetriesAfterItRanDoesNotFailASucceededWait: under
// wait_for = "succeeded", a PyTorchJob whose programs fail three times after they have trained
// (the kubelet restarts them, training-operator counts the restarts against backoff_limit) and
// then complete is not failed by the provider's wait, although its pods crash-loop: once the job
// has run, its workers' exits are its operator's to retry, and the apply ends when the operator
// says the job succeeded.
func TestAccRealNode_aWorkerTheOperatorRetriesAfterItRanDoesNotFailASucceededWait(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-retry")
	claim, dir := a.sharedVolume(t, name)
	config := providerConfig() + fmt.Sprintf(`
resource "training_pytorch_job" "test" {
  name             = %[1]q
  image            = %[2]q
  command          = ["python3", "-c", %[3]q]
  worker_count     = 1
  data_volumes     = ["%[4]s:/state"]
  backoff_limit    = 8
  clean_pod_policy = "None"
  wait_for         = "succeeded"
%[5]s
  timeouts {
    create = "10m"
  }
}
`, name, node.Images[images.Training], retriedProgram, claim, onRealNode)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.PyTorch, name),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("training_pytorch_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Succeeded))},
			Check: func(*terraform.State) error {
				// Each pod's program ran four times: three failures, then the run that completed.
				entries, err := os.ReadDir(dir)
				if err != nil {
					return err
				}
				var runs []string
				for _, e := range entries {
					b, err := os.ReadFile(filepath.Join(dir, e.Name()))
					if err != nil {
						return err
					}
					runs = append(runs, e.Name()+"="+strings.TrimSpace(string(b)))
					if strings.TrimSpace(string(b)) != "4" {
						return fmt.Errorf("the programs ran %v; want each of the master and the worker to have run 4 times", runs)
					}
				}
				if len(runs) != 2 {
					return fmt.Errorf("the programs ran %v; want the master's and the worker's runs", runs)
				}
				return nil
			},
		}},
	})
}
