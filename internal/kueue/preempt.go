package kueue

import (
	"slices"
	"time"
)

// Kueue v0.19.2's classical preemption (pkg/scheduler/preemption, where its Configuration leaves
// fair sharing off; fairshare.go is the other): the workloads to evict so that a workload fits, found among its own
// queue's (by withinClusterQueue) and those of queues in its cohort tree that use more than their
// nominal quota (by reclaimWithinCohort and borrowWithinCohort), in Kueue's order of candidates,
// the fewest that make it fit.

// Preemption policies (Kueue's values).
const (
	Never                     = "Never"
	LowerPriority             = "LowerPriority"
	LowerOrNewerEqualPriority = "LowerOrNewerEqualPriority"
	Any                       = "Any"
)

// The reasons Kueue gives a preempted workload.
const (
	InClusterQueue                = "InClusterQueue"
	InCohortReclamation           = "InCohortReclamation"
	InCohortReclaimWhileBorrowing = "InCohortReclaimWhileBorrowing"
)

// A Target is a workload Kueue would preempt, and why.
type Target struct {
	Workload *Workload
	Reason   string
}

type variant int

const (
	variantNever variant = iota
	variantWithinQueue
	variantHierarchicalReclaim
	variantReclaimWithoutBorrowing
	variantReclaimWhileBorrowing
	variantFairSharing
)

func (v variant) reason() string {
	switch v {
	case variantWithinQueue:
		return InClusterQueue
	case variantReclaimWhileBorrowing:
		return InCohortReclaimWhileBorrowing
	case variantFairSharing:
		return InCohortFairSharing
	}
	return InCohortReclamation
}

type candidate struct {
	wl      *Workload
	lca     *quotaNode // the cohort below which its queue is, for one of another queue
	variant variant
}

// satisfies says whether a preemptor may preempt a candidate under policy.
func satisfies(preemptor, cand *Workload, policy string) bool {
	switch policy {
	case LowerPriority:
		return preemptor.Priority > cand.Priority
	case LowerOrNewerEqualPriority:
		return preemptor.Priority > cand.Priority || preemptor.Priority == cand.Priority && preemptor.Created.Before(cand.Created)
	case Any:
		return true
	}
	return false
}

// usesAny says whether wl holds quota of any of frs.
func usesAny(wl *Workload, frs map[FlavorResource]bool) bool {
	for fr, v := range wl.Usage {
		if v > 0 && frs[fr] {
			return true
		}
	}
	return false
}

// withinNominal says whether the node uses no more than its subtree's quota of frs.
func withinNominal(n *quotaNode, frs map[FlavorResource]bool) bool {
	for fr := range frs {
		if n.subtree[fr] < n.usage[fr] {
			return false
		}
	}
	return true
}

// candidateOrder is Kueue's CandidatesOrdering: evicted first, other queues' before the
// preemptor's, lower priority first, the most recently admitted first.
func candidateOrder(queue string, now time.Time) func(a, b *candidate) int {
	reserved := func(w *Workload) time.Time {
		if w.Reserved.IsZero() {
			return now
		}
		return w.Reserved
	}
	return func(a, b *candidate) int {
		switch {
		case a.wl.Evicted != b.wl.Evicted:
			if a.wl.Evicted {
				return -1
			}
			return 1
		case (a.wl.Queue == queue) != (b.wl.Queue == queue):
			if a.wl.Queue != queue {
				return -1
			}
			return 1
		case a.wl.Priority != b.wl.Priority:
			if a.wl.Priority < b.wl.Priority {
				return -1
			}
			return 1
		}
		if ra, rb := reserved(a.wl), reserved(b.wl); !ra.Equal(rb) {
			if ra.After(rb) {
				return -1
			}
			return 1
		}
		switch {
		case a.wl.UID < b.wl.UID:
			return -1
		case a.wl.UID > b.wl.UID:
			return 1
		}
		return 0
	}
}

// preemptionTargets are the workloads to preempt so that usage (of the preemptor wl in queue
// q) fits, frs being the flavor-resources that need it; none when no set of candidates makes it
// fit (classicalPreemptions).
func (s *Snapshot) preemptionTargets(q *queueState, wl *Workload, frs map[FlavorResource]bool, usage map[FlavorResource]int64) []Target {
	if s.fair != nil {
		return s.fairPreemptionTargets(q, wl, frs, usage)
	}
	var same, hierarchy, priority []*candidate
	classify := func(c *Workload, advantage bool) variant {
		if !usesAny(c, frs) {
			return variantNever
		}
		policy := q.preemption.ReclaimWithinCohort
		if c.Queue == q.spec.Name {
			policy = q.preemption.WithinClusterQueue
		}
		if !satisfies(wl, c, policy) {
			return variantNever
		}
		switch {
		case c.Queue == q.spec.Name:
			return variantWithinQueue
		case advantage:
			return variantHierarchicalReclaim
		case q.borrowWithinCohortForbidden():
			return variantReclaimWithoutBorrowing
		case c.Priority >= wl.Priority || q.preemption.MaxPriorityThreshold != nil && c.Priority > *q.preemption.MaxPriorityThreshold:
			return variantReclaimWithoutBorrowing
		}
		return variantReclaimWhileBorrowing
	}
	fromQueue := func(other *queueState, lca *quotaNode, advantage bool, into *[]*candidate) {
		for _, key := range sortedKeys(other.workloads) {
			c := other.workloads[key]
			if v := classify(c, advantage); v != variantNever {
				*into = append(*into, &candidate{wl: c, lca: lca, variant: v})
			}
		}
	}
	if q.preemption.WithinClusterQueue != Never {
		fromQueue(q, nil, false, &same)
	}
	if q.node.parent != nil && q.preemption.ReclaimWithinCohort != Never {
		advantage, remaining := fitInQuota(q.node, usage)
		var previous *quotaNode
		for root := q.node.parent; root != nil; root = root.parent {
			into := &priority
			if advantage {
				into = &hierarchy
			}
			s.collectInSubtree(q, root, root, previous, advantage, frs, into, fromQueue)
			var fits bool
			fits, remaining = fitInQuota(root, remaining)
			advantage = advantage || fits
			previous = root
		}
	}
	order := candidateOrder(q.spec.Name, s.now)
	for _, list := range [][]*candidate{same, priority, hierarchy} {
		slices.SortStableFunc(list, order)
	}
	evicted := func(list []*candidate, want bool) []*candidate {
		var out []*candidate
		for _, c := range list {
			if c.wl.Evicted == want {
				out = append(out, c)
			}
		}
		return out
	}
	var all []*candidate
	for _, want := range []bool{true, false} {
		all = append(append(append(all, evicted(hierarchy, want)...), evicted(priority, want)...), evicted(same, want)...)
	}

	forbidden := q.borrowWithinCohortForbidden()
	attempts := []bool{true, false}
	switch {
	case len(hierarchy) == 0 && len(priority) == 0 || forbidden && !underNominal(q, frs):
		attempts = []bool{true}
	case forbidden && len(hierarchy) == 0:
		attempts = []bool{false, true}
	}
	for _, borrowing := range attempts {
		var targets []*candidate
		for _, c := range all {
			if !s.candidateValid(q, c, borrowing, frs) {
				continue
			}
			s.removeWorkload(c.wl)
			targets = append(targets, c)
			if fitsNow(q, usage, borrowing) {
				return s.settle(q, usage, targets, borrowing)
			}
		}
		for _, t := range targets {
			s.addWorkload(t.wl)
		}
	}
	return nil
}

// collectInSubtree adds the candidates of the queues under current (of the subtree root), but
// those of the subtree already searched and of nodes within their nominal quota of frs.
func (s *Snapshot) collectInSubtree(q *queueState, current, root, skip *quotaNode, advantage bool, frs map[FlavorResource]bool,
	into *[]*candidate, fromQueue func(*queueState, *quotaNode, bool, *[]*candidate)) {
	for _, child := range current.children {
		if child.queue != nil || child == skip || withinNominal(child, frs) {
			continue
		}
		s.collectInSubtree(q, child, root, skip, advantage, frs, into, fromQueue)
	}
	for _, child := range current.children {
		if child.queue == nil || child.queue == q {
			continue
		}
		if !withinNominal(child, frs) {
			fromQueue(child.queue, root, advantage, into)
		}
	}
}

// candidateValid says whether c may still be preempted, the candidates before it gone: one of
// another queue only while its queue, and its cohorts below the common one, use more than their
// nominal quota; one reclaimed only without borrowing not in an attempt that borrows.
func (s *Snapshot) candidateValid(q *queueState, c *candidate, borrowing bool, frs map[FlavorResource]bool) bool {
	if c.wl.Queue == q.spec.Name {
		return true
	}
	if borrowing && c.variant == variantReclaimWithoutBorrowing {
		return false
	}
	other := s.queues[c.wl.Queue]
	if withinNominal(other.node, frs) {
		return false
	}
	for n := other.node.parent; n != nil && n != c.lca; n = n.parent {
		if withinNominal(n, frs) {
			return false
		}
	}
	return true
}

// settle is what preempting targets (taken out of the snapshot) comes to: those the workload
// still needs once the others are put back (fillBack), as Targets; the snapshot is left whole.
func (s *Snapshot) settle(q *queueState, usage map[FlavorResource]int64, targets []*candidate, borrowing bool) []Target {
	targets = s.fillBack(q, usage, targets, borrowing)
	out := make([]Target, len(targets))
	for i, t := range targets {
		s.addWorkload(t.wl)
		out[i] = Target{Workload: t.wl, Reason: t.variant.reason()}
	}
	return out
}

// fillBack puts back, from the last but one, each target without which the workload still fits.
func (s *Snapshot) fillBack(q *queueState, usage map[FlavorResource]int64, targets []*candidate, borrowing bool) []*candidate {
	for i := len(targets) - 2; i >= 0; i-- {
		s.addWorkload(targets[i].wl)
		if fitsNow(q, usage, borrowing) {
			targets[i] = targets[len(targets)-1]
			targets = targets[:len(targets)-1]
		} else {
			s.removeWorkload(targets[i].wl)
		}
	}
	return targets
}

// fitsNow says whether usage fits the queue's available quota, within its nominal quota unless
// borrowing (workloadFits).
func fitsNow(q *queueState, usage map[FlavorResource]int64, borrowing bool) bool {
	for fr, v := range usage {
		if !borrowing && q.node.quotas[fr].nominal < q.node.usage[fr]+v {
			return false
		}
		if v > q.node.available(fr) {
			return false
		}
	}
	return true
}

// underNominal says whether the queue uses less than its nominal quota of every one of frs.
func underNominal(q *queueState, frs map[FlavorResource]bool) bool {
	for fr := range frs {
		if q.node.quotas[fr].nominal <= q.node.usage[fr] {
			return false
		}
	}
	return true
}

// fitInQuota says whether requests fit the node's subtree quota besides its usage, and what of
// them does not (QuantitiesFitInQuota).
func fitInQuota(n *quotaNode, requests map[FlavorResource]int64) (bool, map[FlavorResource]int64) {
	fits := true
	remaining := map[FlavorResource]int64{}
	for fr, v := range requests {
		if n.subtree[fr] < n.usage[fr]+v {
			fits = false
		}
		remaining[fr] = max(0, v-max(0, n.localQuota(fr)-n.usage[fr]))
	}
	return fits, remaining
}

// simulatePreemption is the preemption oracle: whether preempting makes v of fr fit the
// queue (with only its own workloads preempted: Preempt; only others': Reclaim; none found:
// NoCandidates), and the borrowing it would then need.
func (s *Snapshot) simulatePreemption(q *queueState, wl *Workload, fr FlavorResource, v int64) (preemptionMode, int) {
	targets := s.preemptionTargets(q, wl, map[FlavorResource]bool{fr: true}, map[FlavorResource]int64{fr: v})
	if len(targets) == 0 {
		borrow, _ := q.node.borrowingLevel(fr, v)
		return modeNoCandidates, borrow
	}
	for _, t := range targets {
		s.removeWorkload(t.Workload)
	}
	borrow, _ := q.node.borrowingLevel(fr, v)
	for _, t := range targets {
		s.addWorkload(t.Workload)
	}
	for _, t := range targets {
		if t.Workload.Queue == q.spec.Name {
			return modePreempt, borrow
		}
	}
	return modeReclaim, borrow
}
