package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
				// The master's program ran four times: three failures, then the run that
				// completed, which made the job succeed (a PyTorchJob succeeds with its master).
				// The worker started once at least: its init container waits until the master's
				// name resolves, which it does only while the master is Ready, so a worker may
				// start late, between the master's restarts, and run fewer times.
				runs := map[string]int{}
				entries, err := os.ReadDir(dir)
				if err != nil {
					return err
				}
				for _, e := range entries {
					b, err := os.ReadFile(filepath.Join(dir, e.Name()))
					if err != nil {
						return err
					}
					if runs[e.Name()], err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
						return err
					}
				}
				if runs[name+"-master-0"] != 4 || runs[name+"-worker-0"] < 1 || len(runs) != 2 {
					return fmt.Errorf("the programs ran %v; want the master 4 times and the worker at least once\n%s", runs, a.podStates())
				}
				return nil
			},
		}},
	})
}
