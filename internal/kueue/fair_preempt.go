package kueue

import (
	"math"
	"slices"
)

// Fair sharing's preemption, as Kueue v0.19.2 runs it (pkg/scheduler/preemption/preemption.go,
// fairPreemptions, and pkg/scheduler/preemption/fairsharing): fairshare.go has the shares.

// fairPreemptionTargets are the workloads fair sharing preempts so that usage (of wl in queue q)
// fits, frs being the flavor-resources that need it; none when no set makes it fit
// (fairPreemptions). Candidates are the queue's own workloads (by withinClusterQueue) and those
// of every queue of its cohort tree that borrows what wl needs (by reclaimWithinCohort), taken
// queue by queue from the one of highest share down; one of another queue is preempted while the
// queue stays within its nominal quota, or where its share with wl admitted would be no more than
// the other queue's without the candidate (LessThanOrEqualToFinalShare) or less than the other
// queue's now (LessThanInitialShare), the shares being those of the two subtrees below the
// cohort they share.
func (s *Snapshot) fairPreemptionTargets(q *queueState, wl *Workload, frs map[FlavorResource]bool, usage map[FlavorResource]int64) []Target {
	var candidates []*candidate
	add := func(other *queueState, policy string, v variant) {
		for _, key := range sortedKeys(other.workloads) {
			if c := other.workloads[key]; usesAny(c, frs) && satisfies(wl, c, policy) {
				candidates = append(candidates, &candidate{wl: c, variant: v})
			}
		}
	}
	if q.preemption.WithinClusterQueue != Never {
		add(q, q.preemption.WithinClusterQueue, variantWithinQueue)
	}
	if q.node.parent != nil && q.preemption.ReclaimWithinCohort != Never {
		for _, other := range q.node.root().queuesBelow() {
			if other != q && borrowsAny(other, frs) {
				add(other, q.preemption.ReclaimWithinCohort, variantFairSharing)
			}
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	slices.SortStableFunc(candidates, candidateOrder(q.spec.Name, s.now))

	var targets []*candidate
	fits := false
	q.node.with(usage, func() {
		fits = s.fairRound(q, usage, frs, candidates, s.fair.strategies[0], &targets)
	})
	if !fits {
		for _, t := range targets {
			s.addWorkload(t.wl)
		}
		return nil
	}
	return s.settle(q, usage, targets, true)
}

// fairRound runs the first strategy over candidates (runFirstFsStrategy), then, where they do not
// make room, LessThanInitialShare over those it passed over (runSecondFsStrategy, when a second
// strategy is configured), adding each preempted one to targets and taking it out of the
// snapshot; whether the workload then fits. The queue holds the workload's usage meanwhile.
func (s *Snapshot) fairRound(q *queueState, usage map[FlavorResource]int64, frs map[FlavorResource]bool, candidates []*candidate,
	strategy string, targets *[]*candidate) bool {
	fitsWithout := func() bool {
		fits := false
		q.node.without(usage, func() { fits = fitsNow(q, usage, true) })
		return fits
	}
	preempt := func(c *candidate) bool {
		s.removeWorkload(c.wl)
		*targets = append(*targets, c)
		return fitsWithout()
	}
	// FairSharingPreemptWithinNominal (beta, on by default): a queue within its nominal quota of
	// what needs preemption, the workload counted, reclaims regardless of shares. (A queue
	// without a cohort takes only its own workloads, for which this is not asked.)
	withinNominal := !borrowsAny(q, frs)
	var retry []*candidate
	order := newTargetOrder(s, q, candidates)
	for target := order.next(); target != nil; target = order.next() {
		if target == q {
			c := order.pop(target)
			c.variant = variantWithinQueue
			if preempt(c) {
				return true
			}
			continue
		}
		if withinNominal {
			c := order.pop(target)
			c.variant = variantHierarchicalReclaim
			if preempt(c) {
				return true
			}
			continue
		}
		mine, theirs := order.shares(target)
		if math.IsInf(mine.weighted(), 1) && !math.IsInf(theirs.weighted(), 1) {
			for order.has(target) {
				retry = append(retry, order.pop(target))
			}
			continue
		}
		for order.has(target) {
			c := order.pop(target)
			var after drs
			target.node.without(c.wl.Usage, func() { _, after = order.shares(target) })
			passed := compareShares(mine, after) <= 0
			if strategy == LessThanInitialShare {
				passed = compareShares(mine, theirs) < 0
			}
			if !passed {
				retry = append(retry, c)
				continue
			}
			if preempt(c) {
				return true
			}
			break // the shares have changed: the next queue may be another
		}
	}
	if len(s.fair.strategies) < 2 {
		return false
	}
	order = newTargetOrder(s, q, retry)
	for target := order.next(); target != nil; target = order.next() {
		mine, theirs := order.shares(target)
		c := order.pop(target)
		if compareShares(mine, theirs) < 0 && preempt(c) {
			return true
		}
		order.drop(target)
	}
	return false
}

// borrowsAny says whether the queue, in a cohort, uses more than its nominal quota of any of frs.
func borrowsAny(q *queueState, frs map[FlavorResource]bool) bool {
	if q.node.parent == nil {
		return false
	}
	for fr := range frs {
		if q.node.quotas[fr].nominal < q.node.usage[fr] {
			return true
		}
	}
	return false
}

// targetOrder is the order in which fair sharing takes the queues whose workloads it preempts
// (TargetClusterQueueOrdering): from the root down, the child of highest share, a queue only
// while it borrows (the preemptor's own while it has candidates), a cohort only while it borrows
// or is above the preemptor.
type targetOrder struct {
	s          *Snapshot
	preemptor  *queueState
	above      map[*quotaNode]bool
	candidates map[*queueState][]*candidate
	pruned     map[*quotaNode]bool
}

func newTargetOrder(s *Snapshot, q *queueState, candidates []*candidate) *targetOrder {
	t := &targetOrder{s: s, preemptor: q, above: map[*quotaNode]bool{}, candidates: map[*queueState][]*candidate{}, pruned: map[*quotaNode]bool{}}
	for a := q.node.parent; a != nil; a = a.parent {
		t.above[a] = true
	}
	for _, c := range candidates {
		other := s.queues[c.wl.Queue]
		t.candidates[other] = append(t.candidates[other], c)
	}
	return t
}

func (t *targetOrder) has(q *queueState) bool { return len(t.candidates[q]) > 0 }

func (t *targetOrder) pop(q *queueState) *candidate {
	c := t.candidates[q][0]
	t.candidates[q] = t.candidates[q][1:]
	return c
}

func (t *targetOrder) drop(q *queueState) { t.pruned[q.node] = true }

// next is the queue to take a candidate from next; nil when there is none.
func (t *targetOrder) next() *queueState {
	if t.preemptor.node.parent == nil {
		if !t.pruned[t.preemptor.node] && t.has(t.preemptor) {
			return t.preemptor
		}
		return nil
	}
	root := t.preemptor.node.root()
	for !t.pruned[root] {
		if q := t.within(root); q != nil {
			return q
		}
	}
	return nil
}

// within finds the queue of highest share below cohort, pruning what can yield no more; nil
// when it only pruned (nextTarget).
func (t *targetOrder) within(cohort *quotaNode) *queueState {
	var bestQueue *quotaNode
	bestQueueShare := belowAll
	for _, c := range cohort.children {
		if c.queue == nil || t.pruned[c] {
			continue
		}
		d := c.share()
		switch {
		case len(d.borrowed) == 0 && c.queue != t.preemptor || !t.has(c.queue):
			t.pruned[c] = true
		case compareShares(d, bestQueueShare) == 0:
			order := candidateOrder(t.preemptor.spec.Name, t.s.now)
			if order(t.candidates[c.queue][0], t.candidates[bestQueue.queue][0]) < 0 {
				bestQueue = c
			}
		case compareShares(d, bestQueueShare) > 0:
			bestQueue, bestQueueShare = c, d
		}
	}
	var bestCohort *quotaNode
	bestCohortShare := belowAll
	for _, c := range cohort.children {
		if c.queue != nil || t.pruned[c] {
			continue
		}
		d := c.share()
		switch {
		case len(d.borrowed) == 0 && !t.above[c]:
			t.pruned[c] = true
		case compareShares(d, bestCohortShare) >= 0:
			bestCohort, bestCohortShare = c, d
		}
	}
	switch {
	case bestQueue == nil && bestCohort == nil:
		t.pruned[cohort] = true
		return nil
	case bestCohort != nil && compareShares(bestCohortShare, bestQueueShare) >= 0:
		return t.within(bestCohort)
	}
	return bestQueue.queue
}

// shares are the shares, below the cohort the preemptor's queue and the target share, of the
// preemptor's subtree and the target's (the almost least common ancestors).
func (t *targetOrder) shares(target *queueState) (mine, theirs drs) {
	lca := target.node.parent
	for lca != nil && !t.above[lca] {
		lca = lca.parent
	}
	below := func(n *quotaNode) *quotaNode {
		for n.parent != lca {
			n = n.parent
		}
		return n
	}
	return below(t.preemptor.node).share(), below(target.node).share()
}
