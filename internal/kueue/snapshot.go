package kueue

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A Snapshot is what Kueue's scheduler sees at the start of a cycle: the flavors, the tree of
// ClusterQueues and Cohorts with their quotas, and the workloads that hold quota in them.
type Snapshot struct {
	now     time.Time
	flavors map[string]FlavorSpec
	queues  map[string]*queueState
	cohorts map[string]*quotaNode
	// nodes are the cluster's nodes, for Topology Aware Scheduling (SetNodes); nil: not known.
	nodes []corev1.Node
	// release is the Kueue release whose rules it follows (SetRelease).
	release Release
	// fair is Kueue's fair sharing, nil when its configuration leaves it off (SetFairSharing).
	fair *fairSharing
}

// queueState is a ClusterQueue in a snapshot.
type queueState struct {
	spec        ClusterQueueSpec
	node        *quotaNode
	groups      []group
	preemption  Preemption
	fungibility Fungibility
	// workloads hold quota in the queue, by key.
	workloads map[string]*Workload
	// cycle is the loop of cohorts above the queue ("a -> b -> a"), "" for none: Kueue admits
	// nothing to it (cutCycles).
	cycle string
}

// group is a resource group: the resources it covers and its flavors, in order.
type group struct{ covered, flavors []string }

func (q *queueState) groupOf(r string) *group {
	for i := range q.groups {
		if slices.Contains(q.groups[i].covered, r) {
			return &q.groups[i]
		}
	}
	return nil
}

// borrowWithinCohortForbidden: the queue may not preempt while it borrows.
func (q *queueState) borrowWithinCohortForbidden() bool {
	return q.preemption.BorrowWithinCohort == "" || q.preemption.BorrowWithinCohort == Never
}

// stopped says whether the queue admits nothing (its stop policy holds it).
func (q *queueState) stopped() bool { return q.spec.StopPolicy != "" && q.spec.StopPolicy != "None" }

// CohortSpec is a Cohort object: the cohort above it and its own quotas. A cohort that queues
// name without an object has neither.
type CohortSpec struct {
	Name, Parent   string
	ResourceGroups []ResourceGroup
	// FairSharingWeight is its fair-sharing weight (spec.fairSharing.weight), a quantity; ""
	// unset (Kueue's 1).
	FairSharingWeight string
}

// A Workload is a job as Kueue schedules it: its pod sets and, once it holds quota, what it holds.
type Workload struct {
	// Key is the job's namespace/name; UID orders equal candidates as Kueue orders them.
	Key, UID string
	// Queue is its ClusterQueue.
	Queue    string
	Priority int32
	// Created orders the queue: earlier first among equal priorities.
	Created time.Time
	PodSets []PodSet
	// Usage is the quota it holds, by flavor and resource; nil while it holds none.
	Usage map[FlavorResource]int64
	// Reserved is when it was given its quota; Evicted: it is being evicted.
	Reserved time.Time
	Evicted  bool
	// NamespaceLabels are its namespace's labels, when known (a planned job's): a ClusterQueue
	// that does not select them holds it.
	NamespaceLabels map[string]string
}

// A PodSet is a group of a workload's pods that are alike: how many, what each requests (in
// Kueue's amounts), and the nodes it may run on.
type PodSet struct {
	Name         string
	Count        int64
	Requests     map[string]int64
	NodeSelector map[string]string
	Affinity     *corev1.Affinity
	Tolerations  []corev1.Toleration
	// RequiredTopology is the topology level one domain of which must hold all its pods (its
	// required topology request), "" for none.
	RequiredTopology string
}

// NewSnapshot is Kueue's view of the flavors, queues and cohorts, with the workloads that hold
// quota (those with Usage), at now.
func NewSnapshot(now time.Time, flavors []FlavorSpec, queues []ClusterQueueSpec, fungibility map[string]Fungibility, cohorts []CohortSpec, holding []*Workload) (*Snapshot, error) {
	s := &Snapshot{now: now, flavors: map[string]FlavorSpec{}, queues: map[string]*queueState{}, cohorts: map[string]*quotaNode{}}
	for _, f := range flavors {
		s.flavors[f.Name] = f
	}
	cohort := func(name string) *quotaNode {
		if s.cohorts[name] == nil {
			s.cohorts[name] = newNode(name)
		}
		return s.cohorts[name]
	}
	for _, c := range cohorts {
		n := cohort(c.Name)
		if err := setQuotas(n, c.ResourceGroups); err != nil {
			return nil, fmt.Errorf("cohort %s: %w", c.Name, err)
		}
		var err error
		if n.weight, err = parseWeight(c.FairSharingWeight); err != nil {
			return nil, fmt.Errorf("cohort %s: %w", c.Name, err)
		}
		if c.Parent != "" {
			p := cohort(c.Parent)
			n.parent, p.children = p, append(p.children, n)
		}
	}
	for _, spec := range queues {
		q := &queueState{spec: spec, node: newNode(spec.Name), workloads: map[string]*Workload{},
			preemption: spec.Preemption, fungibility: fungibility[spec.Name]}
		q.node.queue = q
		q.preemption.WithinClusterQueue = cmp.Or(q.preemption.WithinClusterQueue, Never)
		q.preemption.ReclaimWithinCohort = cmp.Or(q.preemption.ReclaimWithinCohort, Never)
		q.fungibility.WhenCanBorrow = cmp.Or(q.fungibility.WhenCanBorrow, MayStopSearch)
		q.fungibility.WhenCanPreempt = cmp.Or(q.fungibility.WhenCanPreempt, TryNextFlavor)
		for _, g := range spec.ResourceGroups {
			gr := group{covered: g.CoveredResources}
			for _, f := range g.Flavors {
				gr.flavors = append(gr.flavors, f.Name)
			}
			q.groups = append(q.groups, gr)
		}
		if err := setQuotas(q.node, spec.ResourceGroups); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s: %w", spec.Name, err)
		}
		var err error
		if q.node.weight, err = parseWeight(spec.FairSharingWeight); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s: %w", spec.Name, err)
		}
		if spec.Cohort != "" {
			p := cohort(spec.Cohort)
			q.node.parent, p.children = p, append(p.children, q.node)
		}
		s.queues[spec.Name] = q
	}
	s.cutCycles()
	for _, n := range s.cohorts {
		if n.parent == nil {
			n.accumulate()
		}
	}
	for _, q := range s.queues {
		if q.node.parent == nil {
			q.node.accumulate()
		}
	}
	for _, wl := range holding {
		if s.queues[wl.Queue] != nil {
			s.addWorkload(wl)
		}
	}
	return s, nil
}

// setQuotas gives a node the quotas of its resource groups, in Kueue's amounts.
func setQuotas(n *quotaNode, groups []ResourceGroup) error {
	amount := func(name, v string) (*int64, error) {
		if v == "" {
			return nil, nil
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", name, v, err)
		}
		a := Amount(name, q)
		return &a, nil
	}
	for _, g := range groups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				nominal, err := amount(r.Name, r.Nominal)
				if err != nil {
					return err
				}
				borrowing, err := amount(r.Name, r.BorrowingLimit)
				if err != nil {
					return err
				}
				lending, err := amount(r.Name, r.LendingLimit)
				if err != nil {
					return err
				}
				q := nodeQuota{borrowing: borrowing, lending: lending}
				if nominal != nil {
					q.nominal = *nominal
				}
				n.quotas[FlavorResource{f.Name, r.Name}] = q
			}
		}
	}
	return nil
}

// addWorkload counts a workload's usage in its queue.
func (s *Snapshot) addWorkload(wl *Workload) {
	q := s.queues[wl.Queue]
	q.workloads[wl.Key] = wl
	for fr, v := range wl.Usage {
		q.node.addUsage(fr, v)
	}
}

// removeWorkload takes a workload's usage out of its queue.
func (s *Snapshot) removeWorkload(wl *Workload) {
	q := s.queues[wl.Queue]
	delete(q.workloads, wl.Key)
	for fr, v := range wl.Usage {
		q.node.removeUsage(fr, v)
	}
}

// cutCycles takes out of the tree every cohort whose parents loop, and every cohort and
// ClusterQueue below one, as Kueue v0.19.2 leaves them out of its scheduler's snapshot
// (pkg/cache/scheduler/snapshot.go, hierarchy.HasCycle) and admits nothing to those queues until
// the loop is broken, saying so on no condition. Each such queue keeps the loop's names (cycle)
// and stands alone, so that nothing walks the loop.
func (s *Snapshot) cutCycles() {
	parentOf := func(name string) string {
		if n := s.cohorts[name]; n != nil && n.parent != nil {
			return n.parent.name
		}
		return ""
	}
	var cut []*quotaNode
	for _, name := range sortedKeys(s.queues) {
		q := s.queues[name]
		if q.cycle = loopAbove(q.spec.Cohort, parentOf); q.cycle != "" {
			cut = append(cut, q.node)
		}
	}
	for _, name := range sortedKeys(s.cohorts) {
		if loopAbove(name, parentOf) != "" {
			cut = append(cut, s.cohorts[name])
		}
	}
	for _, n := range cut {
		n.parent = nil
		if n.queue == nil {
			n.children = nil
		}
	}
}

// loopAbove is the loop the cohorts from cohort up run into (parentOf: a cohort's parent, ""
// for a root), from its first name in order back to it ("a -> b -> a"); "" when they end at a
// root.
func loopAbove(cohort string, parentOf func(string) string) string {
	seen := map[string]int{}
	var path []string
	for n := cohort; n != ""; n = parentOf(n) {
		if i, ok := seen[n]; ok {
			loop := path[i:]
			first := 0
			for j, m := range loop {
				if m < loop[first] {
					first = j
				}
			}
			names := append(slices.Clone(loop[first:]), loop[:first]...)
			return strings.Join(append(names, names[0]), " -> ")
		}
		seen[n] = len(path)
		path = append(path, n)
	}
	return ""
}
