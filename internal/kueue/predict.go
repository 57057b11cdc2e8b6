package kueue

import (
	"fmt"
	"iter"
	"slices"
	"strings"
)

// A Prediction is what Kueue would do with a pending workload now.
type Prediction struct {
	// Admitted: Kueue admits it, on Flavors (by pod set, by resource); with Targets, once it
	// has preempted them.
	Admitted bool
	Flavors  map[string]map[string]string
	Targets  []Target
	// Borrowing is the height of the cohort it borrows from, 0 when its queue's quota holds it.
	Borrowing int
	// Message is why it waits, as Kueue says it, "" when it is admitted.
	Message string
	// Never: it asks for more than its queue could ever hold, as the queues are.
	Never bool
}

// Predict is what Kueue would do with each pending workload, taken as its scheduler takes them:
// in cycles, each the head of every ClusterQueue (by priority, then age), the heads nominated
// against the same quota and admitted in Kueue's order (cycleOrder), each admitted one counting
// against the rest. A workload that does not fit
// leaves its queue's head to the next (BestEffortFIFO) or holds it (StrictFIFO). The snapshot is
// left as it was.
func (s *Snapshot) Predict(pending []*Workload) []Prediction {
	out := make([]Prediction, len(pending))
	index := map[*Workload]int{}
	byQueue := map[string][]*Workload{}
	for i, wl := range pending {
		index[wl] = i
		q := s.queues[wl.Queue]
		switch {
		case q == nil:
			out[i].Message = fmt.Sprintf("ClusterQueue %s doesn't exist", wl.Queue)
		case q.stopped():
			out[i].Message = fmt.Sprintf("ClusterQueue %s is inactive", wl.Queue)
		case q.cycle != "":
			out[i].Message = fmt.Sprintf("ClusterQueue %s is inactive: its cohorts %s form a loop, and Kueue admits nothing below one "+
				"until it is broken (it says so on no condition)", wl.Queue, q.cycle)
		case wl.NamespaceLabels != nil && !q.spec.AdmitsFrom(wl.NamespaceLabels):
			// Kueue holds it until the namespace's labels or the selector change.
			out[i].Message, out[i].Never = NamespaceMismatchOf(s.release), true
		default:
			byQueue[wl.Queue] = append(byQueue[wl.Queue], wl)
		}
	}
	for _, list := range byQueue {
		slices.SortStableFunc(list, queueOrder)
	}
	var admitted []*Workload
	var preempted []*Workload
	defer func() {
		for _, wl := range admitted {
			s.removeWorkload(wl)
		}
		for _, wl := range preempted {
			s.addWorkload(wl)
		}
	}()
	for progress := true; progress; {
		progress = false
		var heads []head
		for _, name := range sortedKeys(byQueue) {
			if list := byQueue[name]; len(list) > 0 {
				heads = append(heads, head{list[0], s.assign(s.queues[name], list[0])})
			}
		}
		for e := range s.cycleOrder(heads) {
			q, p := s.queues[e.wl.Queue], &out[index[e.wl]]
			done := func() {
				byQueue[e.wl.Queue] = byQueue[e.wl.Queue][1:]
				progress = true
			}
			if e.a.Mode == Fit || e.a.Mode == Preempt {
				if msg := s.topologyHold(q, e.wl, e.a.Flavors); msg != "" {
					p.Message = msg
					if q.spec.QueueingStrategy != "StrictFIFO" {
						done()
					}
					continue
				}
			}
			switch e.a.Mode {
			case Fit:
				if !fitsNow(q, e.a.Usage, true) {
					continue // nominated against quota another entry has since taken: the next cycle
				}
			case Preempt:
				targets := s.preemptionTargets(q, e.wl, e.a.needs, e.a.Usage)
				if len(targets) == 0 {
					p.Message = e.a.Message()
					if q.spec.QueueingStrategy != "StrictFIFO" {
						done()
					}
					continue
				}
				for _, t := range targets {
					s.removeWorkload(t.Workload)
					preempted = append(preempted, t.Workload)
				}
				p.Targets = targets
			default:
				p.Message, p.Never = e.a.Message(), e.a.never()
				if q.spec.QueueingStrategy != "StrictFIFO" {
					done()
				}
				continue
			}
			p.Admitted, p.Flavors, p.Borrowing, p.Message = true, e.a.Flavors, e.a.Borrowing, ""
			holding := *e.wl
			holding.Usage = e.a.Usage
			s.addWorkload(&holding)
			admitted = append(admitted, &holding)
			done()
		}
	}
	return out
}

// A head is a ClusterQueue's first pending workload in a cycle, with its assignment.
type head struct {
	wl *Workload
	a  Assignment
}

// cycleOrder yields a cycle's heads, one per ClusterQueue, in the order Kueue takes them.
// Classically (classicalIterator): the least borrowing first, then by priority and age. Under
// fair sharing (fairSharingIterator), each next by the tournament of shares as the heads taken
// before left them (fairNext).
func (s *Snapshot) cycleOrder(heads []head) iter.Seq[head] {
	if s.fair == nil {
		slices.SortStableFunc(heads, func(a, b head) int {
			if a.a.Borrowing != b.a.Borrowing {
				return a.a.Borrowing - b.a.Borrowing
			}
			return queueOrder(a.wl, b.wl)
		})
		return slices.Values(heads)
	}
	return func(yield func(head) bool) {
		byQueue := map[string]head{}
		for _, h := range heads {
			byQueue[h.wl.Queue] = h
		}
		for len(byQueue) > 0 {
			next := byQueue[s.fairNext(byQueue)]
			delete(byQueue, next.wl.Queue)
			if !yield(next) {
				return
			}
		}
	}
}

// queueOrder is a ClusterQueue's order of pending workloads: higher priority, then older, first.
func queueOrder(a, b *Workload) int {
	if a.Priority != b.Priority {
		return int(b.Priority) - int(a.Priority)
	}
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	switch {
	case a.UID < b.UID:
		return -1
	case a.UID > b.UID:
		return 1
	}
	return 0
}

// never says whether the assignment failed for good, as the queues are: every flavor tried
// refused the pods (a taint, node labels), lacked the resource, or could never hold them; none
// only lacked unused quota now.
func (a Assignment) never() bool {
	for _, ps := range a.reasons {
		for _, r := range ps.reasons {
			if strings.HasPrefix(r, "insufficient unused quota") {
				return false
			}
		}
	}
	return a.Mode == NoFit
}
