package provider

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A control-plane node: the job tests running in parallel never schedule there.
const taintedNode = "cn-beijing.192.168.3.227"

// nodeTaintsMu is held for writing by each test that changes a node's taints, and for reading by
// each test that asserts a node's exact taints: a test owns what it expects of the nodes.
var nodeTaintsMu sync.RWMutex

func nodeTaints(a *api, node string) ([]string, error) {
	n, err := a.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.ToString())
	}
	return out, nil
}

func expectTaints(a *api, node string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := nodeTaints(a, node)
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("node %s taints %v, want %v", node, got, want)
		}
		return nil
	}
}

// The walkthrough's `kubectl taint nodes`, from Terraform: the node's other taint is untouched
// when the taint is added and when it is removed.
func TestAccNodeTaint_addAndRemoveLeavesOthers(t *testing.T) {
	a := newAPI(t)
	controlPlane := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	config := providerConfig() + fmt.Sprintf(`
resource "training_node_taint" "dedicated" {
  node   = %q
  key    = "dedicated"
  value  = "ml"
  effect = "NoSchedule"
}
`, taintedNode)
	// Locked once running in parallel: a test that paused holding the lock would block the
	// serial ones.
	t.Parallel()
	nodeTaintsMu.Lock()
	defer nodeTaintsMu.Unlock()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             expectTaints(a, taintedNode, controlPlane.ToString()),
		Steps: []resource.TestStep{
			{Config: config, Check: expectTaints(a, taintedNode, controlPlane.ToString(), "dedicated=ml:NoSchedule")},
			{
				ResourceName:      "training_node_taint.dedicated",
				ImportState:       true,
				ImportStateId:     taintedNode + "/dedicated:NoSchedule",
				ImportStateVerify: true,
			},
		},
	})
}

func TestAccNodeTaint_unknownNode(t *testing.T) {
	newAPI(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig() + `
resource "training_node_taint" "x" {
  node   = "no-such-node"
  key    = "dedicated"
  effect = "NoSchedule"
}
`,
			ExpectError: regexp.MustCompile(`There is no node "no-such-node"`),
		}},
	})
}
