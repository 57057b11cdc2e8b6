package kueue

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// cpuQueue is a ClusterQueue with cpu quotas in flavors, in order: each flavor's nominal quota,
// and its borrowing limit when given.
func cpuQueue(name, cohort string, preemption Preemption, flavors ...FlavorQuotas) ClusterQueueSpec {
	return ClusterQueueSpec{Name: name, Cohort: cohort, Preemption: preemption,
		ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu"}, Flavors: flavors}}}
}

func cpuFlavor(name, nominal, borrowing string) FlavorQuotas {
	return FlavorQuotas{Name: name, Resources: []Quota{{Name: "cpu", Nominal: nominal, BorrowingLimit: borrowing}}}
}

// job is a pending workload of one pod set of pods × cpu (whole cpus) in queue.
func job(key, queue string, priority int32, created time.Duration, pods, cpu int64, tolerations ...corev1.Toleration) *Workload {
	return &Workload{Key: key, UID: key, Queue: queue, Priority: priority, Created: t0.Add(created),
		PodSets: []PodSet{{Name: "worker", Count: pods, Requests: map[string]int64{"cpu": cpu * 1000}, Tolerations: tolerations}}}
}

// holding is a workload that holds cpu (whole cpus) of flavor in queue.
func holding(key, queue, flavor string, priority int32, cpu int64) *Workload {
	wl := job(key, queue, priority, -time.Hour, 1, cpu)
	wl.Usage = map[FlavorResource]int64{{flavor, "cpu"}: cpu * 1000}
	wl.Reserved = t0.Add(-time.Hour)
	return wl
}

func snapshot(t *testing.T, flavors []FlavorSpec, queues []ClusterQueueSpec, holding ...*Workload) *Snapshot {
	t.Helper()
	s, err := NewSnapshot(t0, flavors, queues, nil, nil, holding)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func flavors(names ...string) []FlavorSpec {
	var out []FlavorSpec
	for _, n := range names {
		out = append(out, FlavorSpec{Name: n})
	}
	return out
}

// What Kueue v0.19.2 does with a pending workload, by its rules (flavorassigner, preemption):
// admitted on the first flavor with room, or the next when the first has none; waiting, with
// Kueue's message, when its queue's quota is used; never, when it asks for more than the queue
// could ever hold; admitted by preempting a lower-priority workload of its queue, or by
// reclaiming from a queue of its cohort that borrowed; admitted by borrowing from its cohort;
// refused by a flavor whose taint it does not tolerate; and the second of two workloads of one
// plan waits for the quota the first took.
func TestKueueAdmitsAsItsSchedulerWould(t *testing.T) {
	none := Preemption{}
	for _, tc := range []struct {
		name     string
		flavors  []FlavorSpec
		queues   []ClusterQueueSpec
		holding  []*Workload
		pending  []*Workload
		admitted []bool
		flavor   []string // the worker's cpu flavor of each admitted one
		targets  [][]string
		message  []string // a part of the message of each waiting one
		never    []bool
	}{{
		name: "fits the first flavor", flavors: flavors("default"),
		queues:  []ClusterQueueSpec{cpuQueue("cq", "", none, cpuFlavor("default", "10", ""))},
		pending: []*Workload{job("a", "cq", 0, 0, 2, 2)}, admitted: []bool{true}, flavor: []string{"default"},
	}, {
		name: "the next flavor when the first is used", flavors: flavors("on-demand", "spot"),
		queues:  []ClusterQueueSpec{cpuQueue("cq", "", none, cpuFlavor("on-demand", "4", ""), cpuFlavor("spot", "8", ""))},
		holding: []*Workload{holding("old", "cq", "on-demand", 0, 4)},
		pending: []*Workload{job("a", "cq", 0, 0, 2, 2)}, admitted: []bool{true}, flavor: []string{"spot"},
	}, {
		name: "waits for its queue's quota", flavors: flavors("default"),
		queues:  []ClusterQueueSpec{cpuQueue("cq", "", none, cpuFlavor("default", "10", ""))},
		holding: []*Workload{holding("old", "cq", "default", 0, 8)},
		pending: []*Workload{job("a", "cq", 0, 0, 2, 2)}, admitted: []bool{false}, never: []bool{false},
		message: []string{"couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default, 2 more needed"},
	}, {
		name: "never fits its queue", flavors: flavors("default"),
		queues:  []ClusterQueueSpec{cpuQueue("cq", "", none, cpuFlavor("default", "10", ""))},
		pending: []*Workload{job("a", "cq", 0, 0, 4, 4)}, admitted: []bool{false}, never: []bool{true},
		message: []string{"insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (16) > maximum capacity (10)"},
	}, {
		name: "preempts a lower priority in its queue", flavors: flavors("default"),
		queues:  []ClusterQueueSpec{cpuQueue("cq", "", Preemption{WithinClusterQueue: LowerPriority}, cpuFlavor("default", "10", ""))},
		holding: []*Workload{holding("low", "cq", "default", 0, 8), holding("high", "cq", "default", 100, 2)},
		pending: []*Workload{job("a", "cq", 50, 0, 2, 2)}, admitted: []bool{true}, flavor: []string{"default"},
		targets: [][]string{{"low/" + InClusterQueue}},
	}, {
		name: "preempts the lowest priority first, and no more than it needs", flavors: flavors("default"),
		queues: []ClusterQueueSpec{cpuQueue("cq", "", Preemption{WithinClusterQueue: LowerPriority}, cpuFlavor("default", "12", ""))},
		holding: []*Workload{holding("p10", "cq", "default", 10, 4), holding("p0", "cq", "default", 0, 4),
			holding("p5", "cq", "default", 5, 2)},
		pending: []*Workload{job("a", "cq", 50, 0, 1, 4)}, admitted: []bool{true}, flavor: []string{"default"},
		targets: [][]string{{"p0/" + InClusterQueue}},
	}, {
		name: "borrows from its cohort", flavors: flavors("default"),
		queues: []ClusterQueueSpec{cpuQueue("a", "team", none, cpuFlavor("default", "4", "")),
			cpuQueue("b", "team", none, cpuFlavor("default", "6", ""))},
		pending: []*Workload{job("x", "a", 0, 0, 4, 2)}, admitted: []bool{true}, flavor: []string{"default"},
	}, {
		name: "within its borrowing limit", flavors: flavors("default"),
		queues: []ClusterQueueSpec{cpuQueue("a", "team", none, cpuFlavor("default", "4", "2")),
			cpuQueue("b", "team", none, cpuFlavor("default", "6", ""))},
		pending: []*Workload{job("x", "a", 0, 0, 4, 2)}, admitted: []bool{false}, never: []bool{true},
		message: []string{"maximum capacity (6)"},
	}, {
		name: "reclaims what another queue borrowed", flavors: flavors("default"),
		queues: []ClusterQueueSpec{cpuQueue("a", "team", Preemption{ReclaimWithinCohort: Any}, cpuFlavor("default", "4", "")),
			cpuQueue("b", "team", none, cpuFlavor("default", "6", ""))},
		holding: []*Workload{holding("borrower", "b", "default", 0, 8)},
		pending: []*Workload{job("x", "a", 0, 0, 2, 2)}, admitted: []bool{true}, flavor: []string{"default"},
		targets: [][]string{{"borrower/" + InCohortReclamation}},
	}, {
		name:     "a taint it does not tolerate",
		flavors:  []FlavorSpec{{Name: "gpu", NodeTaints: []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}}},
		queues:   []ClusterQueueSpec{cpuQueue("cq", "", none, cpuFlavor("gpu", "10", ""))},
		pending:  []*Workload{job("a", "cq", 0, 0, 1, 1), job("b", "cq", 0, time.Second, 1, 1, corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists})},
		admitted: []bool{false, true}, flavor: []string{"", "gpu"}, never: []bool{true, false},
		message: []string{"untolerated taint {gpu  NoSchedule <nil>} in flavor gpu"},
	}, {
		name: "the second of a plan waits for the first", flavors: flavors("default"),
		queues:   []ClusterQueueSpec{cpuQueue("cq", "", none, cpuFlavor("default", "10", ""))},
		pending:  []*Workload{job("second", "cq", 0, time.Second, 3, 2), job("first", "cq", 0, 0, 3, 2)},
		admitted: []bool{false, true}, flavor: []string{"", "default"},
		message: []string{"insufficient unused quota for cpu in flavor default, 2 more needed"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := snapshot(t, tc.flavors, tc.queues, tc.holding...)
			got := s.Predict(tc.pending)
			for i, p := range got {
				if p.Admitted != tc.admitted[i] {
					t.Fatalf("%s: admitted %v (%s), want %v", tc.pending[i].Key, p.Admitted, p.Message, tc.admitted[i])
				}
				if p.Admitted {
					if f := p.Flavors["worker"]["cpu"]; tc.flavor != nil && f != tc.flavor[i] {
						t.Errorf("%s: on flavor %s, want %s", tc.pending[i].Key, f, tc.flavor[i])
					}
					var targets []string
					for _, tg := range p.Targets {
						targets = append(targets, tg.Workload.Key+"/"+tg.Reason)
					}
					var want []string
					if tc.targets != nil {
						want = tc.targets[i]
					}
					if strings.Join(targets, ",") != strings.Join(want, ",") {
						t.Errorf("%s: preempts %v, want %v", tc.pending[i].Key, targets, want)
					}
					continue
				}
				if tc.message != nil && !strings.Contains(p.Message, tc.message[i]) {
					t.Errorf("%s: says %q, want it to say %q", tc.pending[i].Key, p.Message, tc.message[i])
				}
				if tc.never != nil && p.Never != tc.never[i] {
					t.Errorf("%s: never %v, want %v", tc.pending[i].Key, p.Never, tc.never[i])
				}
			}
			// The snapshot is as it was.
			again := s.Predict(tc.pending)
			for i := range got {
				if again[i].Admitted != got[i].Admitted {
					t.Fatalf("predicting again changed %s: the snapshot was not restored", tc.pending[i].Key)
				}
			}
		})
	}
}

// A ClusterQueue holds a job from a namespace its selector does not take, with Kueue's words, and
// the job takes no quota from the jobs after it; a workload Kueue already holds so is not one it
// schedules.
func TestAJobFromANamespaceTheQueueDoesNotSelectIsHeld(t *testing.T) {
	q := cpuQueue("team", "", Preemption{}, cpuFlavor("default", "4", ""))
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "team"}, "spec": map[string]any{
		"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "team", "operator": "In", "values": []any{"vision"}}}}}}}
	read, _ := ReadClusterQueue(obj)
	q.Namespaces = read.Namespaces
	s := snapshot(t, []FlavorSpec{{Name: "default"}}, []ClusterQueueSpec{q})
	other := job("speech/x", "team", 0, 0, 1, 4)
	other.NamespaceLabels = map[string]string{"team": "speech"}
	mine := job("vision/y", "team", 0, time.Second, 1, 4)
	mine.NamespaceLabels = map[string]string{"team": "vision"}
	got := s.Predict([]*Workload{other, mine})
	if got[0].Admitted || got[0].Message != NamespaceMismatch {
		t.Errorf("a job of another namespace: %+v, want held with %q", got[0], NamespaceMismatch)
	}
	if !got[1].Admitted {
		t.Errorf("the job of a selected namespace after it is not admitted: %+v", got[1])
	}
	// Kueue v0.17 says it with a capital W, and a snapshot of its rules says it so.
	s.SetRelease(V017)
	if got := s.Predict([]*Workload{other}); got[0].Message != "Workload namespace doesn't match ClusterQueue selector" {
		t.Errorf("Kueue v0.17's words: %q", got[0].Message)
	}
	for _, message := range []string{NamespaceMismatch, NamespaceMismatchOf(V017)} {
		held := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "speech"},
			"spec": map[string]any{"queueName": "team"}, "status": map[string]any{"conditions": []any{
				map[string]any{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message}}}}}
		if _, ok := ReadSchedulingWorkload(held, map[string]string{"speech/team": "team"}); ok {
			t.Errorf("a Workload Kueue holds for its namespace (%q) is read as one it schedules", message)
		}
	}
}
