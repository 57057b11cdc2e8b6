package kueue

import (
	"fmt"
	"testing"
	"time"
)

// Under fair sharing, Kueue v0.19.2 takes the heads of a cohort's queues by their shares, not by
// age (fairSharingIterator), and a queue that borrows may preempt a queue that borrows more
// (fairPreemptions); its classical rules take the older first and let a borrowing queue preempt
// only by its borrowWithinCohort policy. Each case runs under both, and they differ.
func TestFairSharingChoosesAndPreemptsByTheQueuesShares(t *testing.T) {
	none, reclaim := Preemption{}, Preemption{ReclaimWithinCohort: Any}
	weighted := func(q ClusterQueueSpec, w string) ClusterQueueSpec {
		q.FairSharingWeight = w
		return q
	}
	lender := func(cpu string) ClusterQueueSpec {
		return cpuQueue("lender", "org", none, cpuFlavor("default", cpu, ""))
	}
	for _, tc := range []struct {
		name      string
		queues    []ClusterQueueSpec
		holding   []*Workload
		pending   []*Workload
		classical string
		fair      string
	}{{
		name: "the heavier weight borrows first, though younger",
		queues: []ClusterQueueSpec{lender("4"), cpuQueue("a", "org", none, cpuFlavor("default", "0", "")),
			weighted(cpuQueue("b", "org", none, cpuFlavor("default", "0", "")), "2")},
		pending:   []*Workload{job("x", "a", 0, 0, 1, 3), job("y", "b", 0, time.Second, 1, 3)},
		classical: "x admitted; y waits",
		fair:      "x waits; y admitted",
	}, {
		name: "the queue that borrows less borrows first",
		queues: []ClusterQueueSpec{lender("3"), cpuQueue("a", "org", none, cpuFlavor("default", "0", "")),
			cpuQueue("b", "org", none, cpuFlavor("default", "0", ""))},
		holding:   []*Workload{holding("h", "a", "default", 0, 1)},
		pending:   []*Workload{job("x", "a", 0, 0, 1, 2), job("y", "b", 0, time.Second, 1, 2)},
		classical: "x admitted; y waits",
		fair:      "x waits; y admitted",
	}, {
		name: "a borrower preempts the greater borrower",
		queues: []ClusterQueueSpec{lender("2"), cpuQueue("a", "org", reclaim, cpuFlavor("default", "1", "")),
			cpuQueue("b", "org", none, cpuFlavor("default", "1", ""))},
		holding:   []*Workload{holding("h", "b", "default", 0, 3)},
		pending:   []*Workload{job("x", "a", 0, 0, 1, 2)},
		classical: "x waits",
		fair:      "x admitted preempting h (InCohortFairSharing)",
	}, {
		name: "a borrower does not preempt a lesser borrower",
		queues: []ClusterQueueSpec{lender("2"), cpuQueue("a", "org", reclaim, cpuFlavor("default", "1", "")),
			cpuQueue("b", "org", none, cpuFlavor("default", "1", ""))},
		holding:   []*Workload{holding("h", "a", "default", 0, 2), holding("g", "b", "default", 0, 2)},
		pending:   []*Workload{job("x", "a", 0, 0, 1, 1)},
		classical: "x waits",
		fair:      "x waits",
	}, {
		name: "a weight of 0 borrows last",
		queues: []ClusterQueueSpec{lender("2"), weighted(cpuQueue("a", "org", none, cpuFlavor("default", "0", "")), "0"),
			cpuQueue("b", "org", none, cpuFlavor("default", "0", ""))},
		pending:   []*Workload{job("x", "a", 0, 0, 1, 2), job("y", "b", 0, time.Second, 1, 2)},
		classical: "x admitted; y waits",
		fair:      "x waits; y admitted",
	}} {
		for _, fair := range []bool{false, true} {
			s, err := NewSnapshot(t0, flavors("default"), tc.queues, nil, nil, tc.holding)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.classical
			if fair {
				s.SetFairSharing(nil)
				want = tc.fair
			}
			if got := outcomes(tc.pending, s.Predict(tc.pending)); got != want {
				t.Errorf("%s, fair sharing %v: %s; want %s", tc.name, fair, got, want)
			}
		}
	}
}

// outcomes says what became of each pending workload: "x admitted", "x admitted preempting h
// (reason)", "x waits".
func outcomes(pending []*Workload, predictions []Prediction) string {
	var out string
	for i, p := range predictions {
		if i > 0 {
			out += "; "
		}
		switch {
		case !p.Admitted:
			out += pending[i].Key + " waits"
		case len(p.Targets) > 0:
			out += pending[i].Key + " admitted preempting"
			for _, target := range p.Targets {
				out += fmt.Sprintf(" %s (%s)", target.Workload.Key, target.Reason)
			}
		default:
			out += pending[i].Key + " admitted"
		}
	}
	return out
}
