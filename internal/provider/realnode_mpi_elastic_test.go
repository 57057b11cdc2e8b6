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
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
)

// TestAccRealNode_elasticMPIJobDiscoversItsLiveWorkers: an MPIJob with an `elastic` block, its
// launcher running the image's stand-in for horovodrun (Horovod is not in Debian), which runs
// mpi-operator's discover_hosts.sh as Horovod's elastic driver does and reaches each host over
// SSH. While the job is rescaled 2 -> 1 -> 3 in place, the hosts the script lists are the live
// workers, and each is reached, by the same launcher, never restarted. This proves the discovery
// script and SSH under a rescale, not Horovod itself.
func TestAccRealNode_elasticMPIJobDiscoversItsLiveWorkers(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-empi")
	config := func(workers int) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["python3", "train.py"]
  worker_count = %[3]d
  env          = { PATH = "%[4]s/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" }
  elastic = {
    min_workers = 1
    max_workers = 3
  }
%[5]s
}
`, name, node.Images[images.Training], workers, images.ProgramsDir, onRealNode)
	}
	launcher := mpiLauncher(name)
	var launcherUID k8stypes.UID
	discovered := func(workers int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			var want []string
			for i := 0; i < workers; i++ {
				want = append(want, fmt.Sprintf("%s-worker-%d.%s.default.svc", name, i, name))
			}
			a.waitEvents(t, launcher, 3*time.Minute, fmt.Sprintf("the %d live workers discovered and reached", workers), func(events []event) bool {
				// The last hosts event lists exactly the live workers, and each was reached after it.
				last := -1
				for i, e := range events {
					if e.Event == "hosts" {
						last = i
					}
				}
				if last < 0 || !slices.Equal(events[last].Hosts, want) {
					return false
				}
				reached := 0
				for _, e := range events[last+1:] {
					if e.Event == "reached" && slices.Contains(want, e.Host) {
						reached++
					}
				}
				return reached == workers
			})
			// The rescale went on in the same launcher: not replaced, never restarted.
			pods := a.pods("default", launcher)
			if len(pods) != 1 {
				return fmt.Errorf("%d launcher pods", len(pods))
			}
			if launcherUID != "" && pods[0].UID != launcherUID {
				return fmt.Errorf("the launcher was replaced by the rescale to %d workers", workers)
			}
			launcherUID = pods[0].UID
			if s := pods[0].Status.ContainerStatuses; len(s) != 1 || s[0].RestartCount != 0 {
				return fmt.Errorf("the launcher restarted: %+v", s)
			}
			return nil
		}
	}
	inPlace := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionUpdate),
	}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: config(2), Check: discovered(2)},
			{Config: config(1), ConfigPlanChecks: inPlace, Check: discovered(1)},
			{Config: config(3), ConfigPlanChecks: inPlace, Check: discovered(3)},
		},
	})
}
