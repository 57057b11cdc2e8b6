package kueue

import (
	"strings"
	"testing"
	"time"
)

// Kueue v0.19.2 leaves a cohort whose parents loop out of its scheduler's snapshot and admits
// nothing to the ClusterQueues under it (pkg/cache/scheduler/snapshot.go, HasCycle), and reports
// it on no condition. The prediction holds their workloads and says why, and admits as before
// in the rest of the cluster; queue_problems names the loop.
func TestACohortCycleHoldsItsQueuesAndNoOthers(t *testing.T) {
	done := make(chan struct{})
	var preds []Prediction
	var problems []string
	go func() {
		defer close(done)
		queues := []ClusterQueueSpec{
			cpuQueue("looped", "a", Preemption{}, cpuFlavor("default", "1", "")),
			cpuQueue("below", "c", Preemption{}, cpuFlavor("default", "1", "")),
			cpuQueue("fine", "root", Preemption{}, cpuFlavor("default", "1", "")),
			cpuQueue("sibling", "root", Preemption{}, cpuFlavor("default", "4", "")),
		}
		cohorts := []CohortSpec{{Name: "a", Parent: "b"}, {Name: "b", Parent: "a"}, {Name: "c", Parent: "b"}, {Name: "root"}}
		s, err := NewSnapshot(t0, flavors("default"), queues, nil, cohorts, nil)
		if err != nil {
			t.Error(err)
			return
		}
		preds = s.Predict([]*Workload{job("x", "looped", 0, 0, 1, 1), job("y", "below", 0, 0, 1, 1), job("z", "fine", 0, 0, 1, 3)})
		problems = QueueProblems(nil, queues, cohorts...)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the prediction did not return in 10 s over a cohort cycle")
	}
	if len(preds) != 3 {
		t.Fatalf("%d predictions", len(preds))
	}
	for i, name := range []string{"looped", "below"} {
		if p := preds[i]; p.Admitted || !strings.Contains(p.Message, "ClusterQueue "+name+" is inactive") || !strings.Contains(p.Message, "a -> b -> a") {
			t.Errorf("a workload of %s: %+v; want it held, the cycle named", name, p)
		}
	}
	if !preds[2].Admitted || preds[2].Borrowing == 0 {
		t.Errorf("a workload borrowing in a tree without a cycle: %+v; want it admitted, borrowing", preds[2])
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "a -> b -> a") || !strings.Contains(problems[0], "below, looped") {
		t.Errorf("queue problems %q; want the cycle, with the ClusterQueues it holds", problems)
	}
}
