package provider

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
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

// expectTaints checks the taints of taintedNode, the node the taint tests change.
func expectTaints(a *api, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := nodeTaints(a, taintedNode)
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("node %s taints %v, want %v", taintedNode, got, want)
		}
		return nil
	}
}

// The walkthrough's `kubectl taint nodes`, from Terraform: the node's other taint is untouched
// when the taint is added and when it is removed.
func TestAccNodeTaint_addAndRemoveLeavesOthers(t *testing.T) {
	a := newAPI(t)
	controlPlane := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	config := func(value string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_node_taint" "dedicated" {
  node   = %q
  key    = "dedicated"
  value  = %q
  effect = "NoSchedule"
}
`, taintedNode, value)
	}
	// Locked once running in parallel: a test that paused holding the lock would block the
	// serial ones.
	t.Parallel()
	nodeTaintsMu.Lock()
	defer nodeTaintsMu.Unlock()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             expectTaints(a, controlPlane.ToString()),
		Steps: []resource.TestStep{
			{Config: config("ml"), Check: expectTaints(a, controlPlane.ToString(), "dedicated=ml:NoSchedule")},
			{
				ResourceName:      "training_node_taint.dedicated",
				ImportState:       true,
				ImportStateId:     taintedNode + "/dedicated:NoSchedule",
				ImportStateVerify: true,
				// Imported, the taint reads as one this resource did not add.
				ImportStateVerifyIgnore: []string{"added"},
			},
			{
				// A new value is a new taint: the old one goes, the new one comes, the others stay.
				Config: config("training"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_node_taint.dedicated", plancheck.ResourceActionDestroyBeforeCreate)}},
				Check: expectTaints(a, controlPlane.ToString(), "dedicated=training:NoSchedule"),
			},
		},
	})
}

// An administrator's taint is never taken over: a create over it (even an identical one) fails
// and says to import it, and once imported, destroy leaves it on the node.
func TestAccNodeTaint_neverTakesOverOrRemovesAnAdministratorsTaint(t *testing.T) {
	a := newAPI(t)
	controlPlane := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	admins := corev1.Taint{Key: "maintenance", Value: "admin", Effect: corev1.TaintEffectNoSchedule}
	config := providerConfig() + fmt.Sprintf(`
resource "training_node_taint" "maintenance" {
  node   = %q
  key    = "maintenance"
  value  = "admin"
  effect = "NoSchedule"
}
`, taintedNode)
	t.Parallel()
	nodeTaintsMu.Lock()
	defer nodeTaintsMu.Unlock()
	setTaints := func(taints ...corev1.Taint) {
		ctx := context.Background()
		node, err := a.kube.CoreV1().Nodes().Get(ctx, taintedNode, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Spec.Taints = taints
		if _, err := a.kube.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setTaints(controlPlane, admins)
	// Deferred, so that it runs before the lock is released (a Cleanup would run after).
	defer setTaints(controlPlane)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		// Destroy left the imported taint where the administrator put it.
		CheckDestroy: expectTaints(a, controlPlane.ToString(), admins.ToString()),
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)already\s+has\s+the\s+taint\s+maintenance=admin:NoSchedule,\s+which\s+Terraform\s+did\s+not\s+add.*import`),
			},
			{
				Config: config + fmt.Sprintf(`
import {
  to = training_node_taint.maintenance
  id = "%s/maintenance:NoSchedule"
}
`, taintedNode),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("training_node_taint.maintenance", "added", "false"),
					expectTaints(a, controlPlane.ToString(), admins.ToString()),
				),
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
