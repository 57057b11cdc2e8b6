package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
)

func scaleConfig(kubeconfig, prefix string, n int) string {
	return fmt.Sprintf(`
provider "training" {
  config_path = %[1]q
}

resource "training_tf_job" "scale" {
  count        = %[3]d
  name         = "%[2]s-${count.index}"
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 1
  tolerations  = ["all"]
}
`, kubeconfig, prefix, n)
}

// watchCounts is what one step's apply or destroy opened: WATCH requests by resource and
// namespace, and the most watches open at once.
type watchCounts struct {
	paths map[string]int64
	peak  int64
}

func (w watchCounts) total() (n int64) {
	for _, c := range w.paths {
		n += c
	}
	return n
}

func (w watchCounts) String() string {
	keys := slices.Sorted(maps.Keys(w.paths))
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, w.paths[k]))
	}
	return fmt.Sprintf("%d WATCH requests (%s), at most %d open at once", w.total(), strings.Join(parts, ", "), w.peak)
}

// Every wait of a provider process shares one informer per resource and namespace: applying 100
// jobs that each wait until they run opens the same watches as applying 10 (the TFJobs, the
// namespace's pods and its events), not three per job. So do their deletions.
func TestAccScale_watchesDoNotGrowWithJobs(t *testing.T) {
	a := newAPI(t)
	proxy, kubeconfig := startProxy(t, apiproxy.Options{})
	prefix := "scl" + acctest.RandStringFromCharSet(5, acctest.CharSetAlphaNum)
	counts := map[int]watchCounts{}
	var planRequests int64
	step := func(n int) resource.TestStep {
		return resource.TestStep{
			PreConfig: proxy.ResetCounts,
			Config:    scaleConfig(kubeconfig, prefix, n),
			Check: func(s *terraform.State) error {
				counts[n] = watchCounts{proxy.WatchPaths(), proxy.PeakWatches()}
				t.Logf("apply of %d jobs: %s", n, counts[n])
				// Each job was waited for until it ran, with its one worker pod.
				running := 0
				for _, r := range s.RootModule().Resources {
					if r.Type == "training_tf_job" && r.Primary.Attributes["status"] == "RUNNING" {
						running++
					}
				}
				if running != n {
					return fmt.Errorf("%d of the %d jobs are RUNNING in state", running, n)
				}
				return nil
			},
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, prefix),
		Steps: []resource.TestStep{
			step(10),
			step(100),
			// Refreshing the 100 jobs (every plan of the step) shares one list of the TFJobs and
			// one of the pods between the reads: fewer requests than jobs in all, where a GET and
			// a LIST per job made 200 a plan.
			{PreConfig: proxy.ResetCounts, Config: scaleConfig(kubeconfig, prefix, 100), PlanOnly: true},
			{
				// Destroying the 100 jobs, each waiting until its TFJob, Service and pod are gone, opens
				// no more watches than the applies did.
				PreConfig: func() {
					planRequests = proxy.Requests()
					proxy.ResetCounts()
				},
				Config: scaleConfig(kubeconfig, prefix, 0),
				Check: func(*terraform.State) error {
					t.Logf("plans of 100 jobs: %d requests", planRequests)
					if planRequests == 0 || planRequests >= 100 {
						return fmt.Errorf("the plans refreshing 100 jobs sent %d requests, want at least one and fewer than 100", planRequests)
					}
					destroy := watchCounts{proxy.WatchPaths(), proxy.PeakWatches()}
					t.Logf("destroy of 100 jobs: %s", destroy)
					if err := sameWatches(counts[10], counts[100]); err != nil {
						return fmt.Errorf("apply of 100 jobs against apply of 10: %w", err)
					}
					if destroy.peak > counts[10].peak || len(destroy.paths) > len(counts[10].paths) {
						return fmt.Errorf("destroying 100 jobs opened more watches than applying 10: %s against %s", destroy, counts[10])
					}
					return nil
				},
			},
		},
	})
}

// sameWatches says whether big opened the watches small did and no more: the same resources
// and namespaces, no more at once, and at most one renewal each (the API server ends a watch
// after a few minutes, and the informer opens it again).
func sameWatches(small, big watchCounts) error {
	if !slices.Equal(slices.Sorted(maps.Keys(small.paths)), slices.Sorted(maps.Keys(big.paths))) || big.peak > small.peak ||
		big.total() > small.total()+int64(len(small.paths)) {
		return fmt.Errorf("%s, against %s", big, small)
	}
	if small.total() == 0 {
		return fmt.Errorf("no watch at all: the jobs were not waited for")
	}
	return nil
}
