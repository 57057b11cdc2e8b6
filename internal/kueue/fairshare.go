package kueue

import (
	"cmp"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Kueue v0.19.2's fair sharing, where its configuration enables it (and its feature gates are at
// their defaults): the heads of the ClusterQueues of one cohort tree are taken by a tournament
// of dominant resource shares (pkg/scheduler/fair_sharing_iterator.go), and a workload that
// needs others' quota preempts by the shares of its queue and theirs
// (pkg/scheduler/preemption/preemption.go, fairPreemptions; pkg/scheduler/preemption/fairsharing).
// The share of a queue or cohort is what it borrows beyond its own quota, per resource, over
// what its parent could lend it, divided by its weight (pkg/cache/scheduler/fair_sharing.go).

// Kueue's preemption strategies under fair sharing (config.kueue.x-k8s.io, PreemptionStrategy).
const (
	LessThanOrEqualToFinalShare = "LessThanOrEqualToFinalShare"
	LessThanInitialShare        = "LessThanInitialShare"
)

// InCohortFairSharing is the reason Kueue gives a workload preempted by fair sharing.
const InCohortFairSharing = "InCohortFairSharing"

// fairSharing is Kueue's fair sharing: its preemption strategies, in order.
type fairSharing struct{ strategies []string }

// SetFairSharing makes the snapshot share as Kueue does with fair sharing enabled, preempting by
// strategies (none: Kueue's default, LessThanOrEqualToFinalShare then LessThanInitialShare).
func (s *Snapshot) SetFairSharing(strategies []string) {
	if len(strategies) == 0 {
		strategies = []string{LessThanOrEqualToFinalShare, LessThanInitialShare}
	}
	s.fair = &fairSharing{strategies: strategies}
}

// parseWeight is a fair-sharing weight as Kueue reads it ("": 1).
func parseWeight(w string) (float64, error) {
	if w == "" {
		return 1, nil
	}
	q, err := resource.ParseQuantity(w)
	if err != nil {
		return 0, fmt.Errorf("fair-sharing weight %q: %w", w, err)
	}
	return q.AsApproximateFloat64(), nil
}

// drs is a node's dominant resource share (Kueue's DRS).
type drs struct {
	weight float64
	// ratio is the largest, over resources, of what the node borrows per 1000 of what its
	// parent could lend it; 0 when it borrows nothing (or has no parent), -1 below every share.
	ratio float64
	// borrowed are the flavor-resources it uses beyond its subtree's quota.
	borrowed map[FlavorResource]bool
}

// belowAll is a share below every other (Kueue's NegativeDRS).
var belowAll = drs{weight: 1, ratio: -1}

func (d drs) zeroWeightBorrows() bool { return d.weight == 0 && d.ratio != 0 }

// weighted is the share divided by the weight: infinite for a borrower of weight 0.
func (d drs) weighted() float64 {
	switch {
	case d.ratio == 0:
		return 0
	case d.weight == 0:
		return math.Inf(1)
	}
	return d.ratio / d.weight
}

// borrowingOn says whether the node borrows any flavor-resource the usage asks for.
func (d drs) borrowingOn(usage map[FlavorResource]int64) bool {
	for fr := range d.borrowed {
		if usage[fr] > 0 {
			return true
		}
	}
	return false
}

// compareShares orders shares, the lower first (CompareDRS): a borrower of weight 0 after all
// others.
func compareShares(a, b drs) int {
	switch {
	case a.zeroWeightBorrows() && b.zeroWeightBorrows():
		return cmp.Compare(a.ratio, b.ratio)
	case a.zeroWeightBorrows():
		return 1
	case b.zeroWeightBorrows():
		return -1
	}
	return cmp.Compare(a.weighted(), b.weighted())
}

// share is the node's dominant resource share (dominantResourceShare): what it uses beyond its
// subtree's quota, summed over flavors per resource, per 1000 of what its parent could lend of
// that resource (potentialAvailable over every flavor of the tree), the largest of them.
func (n *quotaNode) share() drs {
	d := drs{weight: n.weight}
	if n.parent == nil {
		return d
	}
	borrowing := map[string]int64{}
	for fr, quota := range n.subtree {
		if b := n.usage[fr] - quota; b > 0 {
			borrowing[fr.Resource] += b
			if d.borrowed == nil {
				d.borrowed = map[FlavorResource]bool{}
			}
			d.borrowed[fr] = true
		}
	}
	if len(borrowing) == 0 {
		return d
	}
	lendable := map[string]int64{}
	for fr := range n.parent.root().subtree {
		lendable[fr.Resource] += n.parent.potentialAvailable(fr)
	}
	for r, b := range borrowing {
		if l := lendable[r]; l > 0 {
			d.ratio = max(d.ratio, float64(b)*1000/float64(l))
		}
	}
	return d
}

// with counts usage at the node for as long as f runs (SimulateUsageAddition).
func (n *quotaNode) with(usage map[FlavorResource]int64, f func()) {
	for fr, v := range usage {
		n.addUsage(fr, v)
	}
	defer func() {
		for fr, v := range usage {
			n.removeUsage(fr, v)
		}
	}()
	f()
}

// without takes usage off the node for as long as f runs (SimulateUsageRemoval).
func (n *quotaNode) without(usage map[FlavorResource]int64, f func()) {
	for fr, v := range usage {
		n.removeUsage(fr, v)
	}
	defer func() {
		for fr, v := range usage {
			n.addUsage(fr, v)
		}
	}()
	f()
}

// root is the top of the node's tree.
func (n *quotaNode) root() *quotaNode {
	for n.parent != nil {
		n = n.parent
	}
	return n
}

// queuesBelow are the ClusterQueues of the node's subtree.
func (n *quotaNode) queuesBelow() []*queueState {
	if n.queue != nil {
		return []*queueState{n.queue}
	}
	var out []*queueState
	for _, c := range n.children {
		out = append(out, c.queuesBelow()...)
	}
	return out
}

// fairNext is the head Kueue takes next under fair sharing (fairSharingIterator.pop): that of a
// queue without a cohort as it comes; in a cohort tree, the winner of a tournament from the root
// down, where each cohort's children put forward their winner and the child whose share would
// be the lowest with its winner admitted wins, the one not borrowing what its winner asks for
// first, then by priority and age. heads are by ClusterQueue.
func (s *Snapshot) fairNext(heads map[string]head) string {
	first := sortedKeys(heads)[0]
	q := s.queues[first]
	if q.node.parent == nil {
		return first
	}
	root := q.node.root()
	type key struct {
		cohort *quotaNode
		queue  string
	}
	shares := map[key]drs{}
	for _, in := range root.queuesBelow() {
		e, ok := heads[in.spec.Name]
		if !ok {
			continue
		}
		in.node.with(e.a.Usage, func() {
			d := in.node.share()
			for a := in.node.parent; a != nil; a = a.parent {
				shares[key{a, in.spec.Name}] = d
				d = a.share()
			}
		})
	}
	less := func(a, b string, cohort *quotaNode) bool {
		da, db := shares[key{cohort, a}], shares[key{cohort, b}]
		// FairSharingPrioritizeNonBorrowing (beta, on by default).
		if ba, bb := da.borrowingOn(heads[a].a.Usage), db.borrowingOn(heads[b].a.Usage); ba != bb {
			return !ba
		}
		if c := compareShares(da, db); c != 0 {
			return c < 0
		}
		// PrioritySortingWithinCohort (beta, on by default), then the older first.
		return queueOrder(heads[a].wl, heads[b].wl) < 0
	}
	var tournament func(cohort *quotaNode) string
	tournament = func(cohort *quotaNode) string {
		var candidates []string
		for _, c := range cohort.children {
			if c.queue == nil {
				if w := tournament(c); w != "" {
					candidates = append(candidates, w)
				}
			}
		}
		for _, c := range cohort.children {
			if c.queue != nil {
				if _, ok := heads[c.queue.spec.Name]; ok {
					candidates = append(candidates, c.queue.spec.Name)
				}
			}
		}
		if len(candidates) == 0 {
			return ""
		}
		best := candidates[0]
		for _, c := range candidates[1:] {
			if less(c, best, cohort) {
				best = c
			}
		}
		return best
	}
	return tournament(root)
}
