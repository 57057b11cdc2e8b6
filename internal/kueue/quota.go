package kueue

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// Kueue v0.19.2's quota arithmetic (pkg/cache/scheduler/resource_node.go): ClusterQueues and
// Cohorts form a tree of nodes, each with its own quota per flavor and resource, the quota of
// its subtree and the usage of its subtree. What a ClusterQueue may use is its own quota not lent
// out, and what its ancestors hold unused, within its borrowing limit.

// FlavorResource is a resource of one flavor.
type FlavorResource struct{ Flavor, Resource string }

// Amount is q of resource as Kueue counts it: cpu in thousandths, anything else in whole units,
// rounded up.
func Amount(name string, q resource.Quantity) int64 {
	if name == "cpu" {
		return q.MilliValue()
	}
	return q.Value()
}

// FormatAmount is an amount as Kueue writes it in its messages: cpu as a decimal quantity,
// memory and storage in binary units, anything else as a number.
func FormatAmount(name string, v int64) string {
	switch {
	case name == "cpu":
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case name == "memory" || name == "ephemeral-storage" || len(name) > 10 && name[:10] == "hugepages-":
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}

// nodeQuota is a node's own quota of a flavor's resource; a nil limit is none.
type nodeQuota struct {
	nominal   int64
	borrowing *int64
	lending   *int64
}

// quotaNode is a ClusterQueue (queue set) or a Cohort in the tree.
type quotaNode struct {
	name     string
	queue    *queueState
	parent   *quotaNode
	children []*quotaNode
	quotas   map[FlavorResource]nodeQuota
	subtree  map[FlavorResource]int64
	usage    map[FlavorResource]int64
	// weight is its fair-sharing weight (1 unless set).
	weight float64
}

func newNode(name string) *quotaNode {
	return &quotaNode{name: name, quotas: map[FlavorResource]nodeQuota{}, subtree: map[FlavorResource]int64{}, usage: map[FlavorResource]int64{},
		weight: 1}
}

// localQuota is what a node keeps of its subtree's quota for itself: all but its lending limit.
func (n *quotaNode) localQuota(fr FlavorResource) int64 {
	if l := n.quotas[fr].lending; l != nil {
		return max(0, n.subtree[fr]-*l)
	}
	return 0
}

// available is what the node may still use of fr: its own unused local quota, and what its
// ancestors hold unused within its borrowing limit.
func (n *quotaNode) available(fr FlavorResource) int64 {
	if n.parent == nil {
		return n.subtree[fr] - n.usage[fr]
	}
	local := max(0, n.localQuota(fr)-n.usage[fr])
	fromParent := n.parent.available(fr)
	if bl := n.quotas[fr].borrowing; bl != nil {
		storedInParent := n.subtree[fr] - n.localQuota(fr)
		usedInParent := max(0, n.usage[fr]-n.localQuota(fr))
		fromParent = min(fromParent, storedInParent-usedInParent+*bl)
	}
	return local + fromParent
}

// potentialAvailable is the most the node could ever use of fr, with nothing else using any.
func (n *quotaNode) potentialAvailable(fr FlavorResource) int64 {
	if n.parent == nil {
		return n.subtree[fr]
	}
	p := n.localQuota(fr) + n.parent.potentialAvailable(fr)
	if bl := n.quotas[fr].borrowing; bl != nil {
		p = min(p, n.subtree[fr]+*bl)
	}
	return p
}

// addUsage counts v more of fr used at the node: what its local quota cannot hold is its
// parent's usage too.
func (n *quotaNode) addUsage(fr FlavorResource, v int64) {
	local := max(0, n.localQuota(fr)-n.usage[fr])
	n.usage[fr] += v
	if n.parent != nil && v > local {
		n.parent.addUsage(fr, v-local)
	}
}

// removeUsage takes v of fr off the node's usage, and off its ancestors' what was theirs.
func (n *quotaNode) removeUsage(fr FlavorResource, v int64) {
	beyond := max(0, n.usage[fr]-n.localQuota(fr))
	n.usage[fr] -= v
	if n.parent != nil {
		if freed := min(v, beyond); freed > 0 {
			n.parent.removeUsage(fr, freed)
		}
	}
}

// accumulate sets the subtree quotas of the tree below n, children first.
func (n *quotaNode) accumulate() {
	for fr, q := range n.quotas {
		n.subtree[fr] = q.nominal
	}
	for _, c := range n.children {
		c.accumulate()
		for fr, v := range c.subtree {
			n.subtree[fr] += v - c.localQuota(fr)
		}
	}
}

// height is a cohort's distance to its furthest leaf: 1 over ClusterQueues alone (getNodeHeight).
func (n *quotaNode) height() int {
	h := min(len(n.children), 1)
	for _, c := range n.children {
		if c.queue == nil {
			h = max(h, c.height()+1)
		}
	}
	return h
}

// borrowingLevel is the height of the lowest subtree above a queue that holds v of fr besides
// what it uses (0: the queue's own nominal quota does), and whether that subtree is less than the
// whole tree (FindHeightOfLowestSubtreeThatFits).
func (n *quotaNode) borrowingLevel(fr FlavorResource, v int64) (level int, belowRoot bool) {
	if n.quotas[fr].nominal >= n.usage[fr]+v || n.parent == nil {
		return 0, n.parent != nil
	}
	remaining := v - max(0, n.localQuota(fr)-n.usage[fr])
	for t := n.parent; t != nil; t = t.parent {
		if t.subtree[fr] >= t.usage[fr]+remaining {
			return t.height(), t.parent != nil
		}
		remaining -= max(0, t.localQuota(fr)-t.usage[fr])
	}
	root := n.parent
	for root.parent != nil {
		root = root.parent
	}
	return root.height(), false
}
