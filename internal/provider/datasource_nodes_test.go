package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Arena walkthrough's first step, `kubectl get nodes`, on the local cluster's layout.
func TestAccNodesDataSource_seedLayout(t *testing.T) {
	a := newAPI(t)
	// Locked once running in parallel: a test that paused holding the lock would block the
	// serial ones.
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig() + `
data "training_nodes" "all" {}

data "training_nodes" "gpu_node" {
  taint_key = "gpu_node"
}

data "training_nodes" "gpu_present" {
  label_selector = "nvidia.com/gpu.present=true"
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.training_nodes.gpu_node", tfjsonpath.New("nodes"), knownvalue.ListExact([]knownvalue.Check{
					nodeCheck("cn-beijing.192.168.3.228", "gpu_node=invalid:NoSchedule"),
					nodeCheck("cn-beijing.192.168.3.229", "gpu_node=invalid:NoSchedule"),
				})),
				statecheck.ExpectKnownValue("data.training_nodes.gpu_present", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(3)),
				statecheck.ExpectKnownValue("data.training_nodes.gpu_present", tfjsonpath.New("nodes").AtSliceIndex(2), nodeCheck(ssdNode, "ssd_node=invalid:NoSchedule")),
				statecheck.ExpectKnownValue("data.training_nodes.all", tfjsonpath.New("nodes").AtSliceIndex(0).AtMapKey("taints"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("node-role.kubernetes.io/control-plane:NoSchedule")})),
				statecheck.ExpectKnownValue("data.training_nodes.all", tfjsonpath.New("nodes").AtSliceIndex(0).AtMapKey("gpu_capacity"), knownvalue.Int64Exact(0)),
			},
			// The data source lists exactly the nodes the API has.
			Check: func(s *terraform.State) error {
				list, err := a.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return err
				}
				got := s.RootModule().Resources["data.training_nodes.all"].Primary.Attributes["nodes.#"]
				if got != fmt.Sprint(len(list.Items)) {
					return fmt.Errorf("data source has %s nodes, the API %d", got, len(list.Items))
				}
				return nil
			},
		}},
	})
}

func nodeCheck(name, taint string) knownvalue.Check {
	return knownvalue.ObjectPartial(map[string]knownvalue.Check{
		"name":            knownvalue.StringExact(name),
		"taints":          knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(taint)}),
		"gpu_capacity":    knownvalue.Int64Exact(8),
		"gpu_allocatable": knownvalue.Int64Exact(8),
		"ready":           knownvalue.Bool(true),
		"schedulable":     knownvalue.Bool(true),
	})
}
