package kueue

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Declared is what one plan declares of Kueue's queues: the flavors, ClusterQueues and
// LocalQueues whose plans have been checked so far, in the order Terraform plans them (an object
// after those it refers to). What it holds is certain: the configuration says it, whatever the
// cluster holds now.
type Declared struct {
	mu          sync.Mutex
	flavors     map[string]FlavorSpec
	queues      map[string]ClusterQueueSpec
	localQueues map[string]string
	cohorts     map[string]CohortSpec
	priorities  map[string]int32
}

// NewDeclared is a plan's record of its Kueue objects, empty.
func NewDeclared() *Declared {
	return &Declared{flavors: map[string]FlavorSpec{}, queues: map[string]ClusterQueueSpec{}, localQueues: map[string]string{},
		cohorts: map[string]CohortSpec{}, priorities: map[string]int32{}}
}

// PriorityClass records a WorkloadPriorityClass the plan declares.
func (d *Declared) PriorityClass(c WorkloadPriorityClassSpec) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.priorities[c.Name] = int32(c.Value)
}

// PriorityOf is the value of a WorkloadPriorityClass the plan declares; ok is false for one it
// does not.
func (d *Declared) PriorityOf(name string) (value int32, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	value, ok = d.priorities[name]
	return value, ok
}

// Cohort records a Cohort the plan declares.
func (d *Declared) Cohort(c CohortSpec) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cohorts[c.Name] = c
}

// OverlayCohorts is the cluster's Cohorts as this plan leaves them: each declared one in place
// of the cluster's.
func (d *Declared) OverlayCohorts(cohorts []CohortSpec) []CohortSpec {
	d.mu.Lock()
	defer d.mu.Unlock()
	return overlay(cohorts, d.cohorts, func(c CohortSpec) string { return c.Name })
}

// Flavor records a flavor the plan declares.
func (d *Declared) Flavor(f FlavorSpec) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flavors[f.Name] = f
}

// ClusterQueue records a ClusterQueue the plan declares.
func (d *Declared) ClusterQueue(q ClusterQueueSpec) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queues[q.Name] = q
}

// LocalQueue records a LocalQueue ("namespace/name") the plan declares, and its ClusterQueue.
func (d *Declared) LocalQueue(key, clusterQueue string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.localQueues[key] = clusterQueue
}

// Queue is the declared ClusterQueue of a declared LocalQueue ("namespace/name") and the
// declared flavors it names; ok is false unless the plan declares all of them.
func (d *Declared) Queue(localQueue string) (q ClusterQueueSpec, flavors []FlavorSpec, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	name, ok := d.localQueues[localQueue]
	if !ok {
		return q, nil, false
	}
	if q, ok = d.queues[name]; !ok {
		return q, nil, false
	}
	for _, g := range q.ResourceGroups {
		for _, f := range g.Flavors {
			spec, ok := d.flavors[f.Name]
			if !ok {
				return q, nil, false
			}
			flavors = append(flavors, spec)
		}
	}
	return q, flavors, true
}

// Overlay is the cluster's flavors, ClusterQueues and LocalQueues ("namespace/name" to its
// ClusterQueue) as this plan leaves them: each declared object in place of the cluster's.
func (d *Declared) Overlay(flavors []FlavorSpec, queues []ClusterQueueSpec, localQueues map[string]string) ([]FlavorSpec, []ClusterQueueSpec, map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fs := overlay(flavors, d.flavors, func(f FlavorSpec) string { return f.Name })
	qs := overlay(queues, d.queues, func(q ClusterQueueSpec) string { return q.Name })
	lqs := maps.Clone(localQueues)
	if lqs == nil {
		lqs = map[string]string{}
	}
	maps.Copy(lqs, d.localQueues)
	return fs, qs, lqs
}

// HasFlavor and HasClusterQueue say whether the plan declares the object.
func (d *Declared) HasFlavor(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.flavors[name]
	return ok
}

func (d *Declared) HasClusterQueue(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.queues[name]
	return ok
}

// NeverAdmits says why Kueue v0.19.2 could never admit wl in queue, whatever else holds quota
// and whatever the cohort lends: a resource the queue covers in no resource group, or every flavor
// of its group refusing the pods (a taint they do not tolerate, node labels they do not match) or
// too small for them, when the queue has no cohort to borrow from. "" when it may be admitted,
// or when that depends on what the plan does not declare (a flavor it names but does not
// declare, a cohort's quota). queue and flavors are as declared.
func NeverAdmits(queue ClusterQueueSpec, flavors []FlavorSpec, wl *Workload) string {
	alone := queue
	alone.Cohort = ""
	alone.StopPolicy = ""
	s, err := NewSnapshot(wl.Created, flavors, []ClusterQueueSpec{alone}, nil, nil, nil)
	if err != nil {
		return ""
	}
	w := *wl
	w.Queue = queue.Name
	a := s.assign(s.queues[queue.Name], &w)
	if a.Mode != NoFit {
		return ""
	}
	for _, ps := range a.reasons {
		for _, r := range ps.reasons {
			switch {
			case strings.HasPrefix(r, "insufficient") && queue.Cohort != "":
				return "" // its cohort may lend it what it lacks
			case strings.HasPrefix(r, "flavor ") && strings.HasSuffix(r, " not found"):
				return ""
			}
		}
	}
	return a.Message()
}

// A Finding is a check of what a plan declares: what is wrong, naming both ends.
type Finding struct {
	Summary, Detail string
}

// CheckLocalQueue checks a declared LocalQueue ("namespace/name") against the ClusterQueues the
// cluster has (nil when they cannot be read) and the plan declares before it.
func (d *Declared) CheckLocalQueue(key, clusterQueue string, inCluster map[string]bool) []Finding {
	if inCluster == nil || inCluster[clusterQueue] || d.HasClusterQueue(clusterQueue) {
		return nil
	}
	return []Finding{{
		Summary: fmt.Sprintf("LocalQueue %s names ClusterQueue %s, which does not exist", key, clusterQueue),
		Detail: fmt.Sprintf("The cluster has no ClusterQueue %s, and this plan declares none before LocalQueue %s: Kueue keeps the LocalQueue inactive "+
			"and holds every job submitted to it. If this configuration declares it, refer to it (cluster_queue = training_cluster_queue.NAME.name) "+
			"so that it is planned and created first.", clusterQueue, key),
	}}
}

// CheckClusterQueue checks a declared ClusterQueue's flavors against those the cluster has (nil
// when they cannot be read) and the plan declares before it.
func (d *Declared) CheckClusterQueue(q ClusterQueueSpec, inCluster map[string]bool) []Finding {
	if inCluster == nil {
		return nil
	}
	var out []Finding
	for _, g := range q.ResourceGroups {
		for _, f := range g.Flavors {
			if inCluster[f.Name] || d.HasFlavor(f.Name) {
				continue
			}
			out = append(out, Finding{
				Summary: fmt.Sprintf("ClusterQueue %s names ResourceFlavor %s, which does not exist", q.Name, f.Name),
				Detail: fmt.Sprintf("The cluster has no ResourceFlavor %s, and this plan declares none before ClusterQueue %s: Kueue keeps the ClusterQueue "+
					"inactive (FlavorNotFound) and admits nothing through it. If this configuration declares it, refer to it "+
					"(name = training_resource_flavor.NAME.name) so that it is planned and created first.", f.Name, q.Name),
			})
		}
	}
	return out
}

// CheckCohort checks a declared Cohort's parents, as the cluster has them (inCluster; nil when
// they cannot be read) and the plan declares them before it: a loop, below which Kueue admits
// nothing and says so on no condition.
func (d *Declared) CheckCohort(c CohortSpec, inCluster []CohortSpec) []Finding {
	if inCluster == nil {
		return nil
	}
	parents := map[string]string{}
	for _, o := range d.OverlayCohorts(inCluster) {
		parents[o.Name] = o.Parent
	}
	parents[c.Name] = c.Parent
	loop := loopAbove(c.Name, func(n string) string { return parents[n] })
	if loop == "" {
		return nil
	}
	return []Finding{{
		Summary: fmt.Sprintf("Cohort %s closes a loop of cohorts: %s", c.Name, loop),
		Detail: fmt.Sprintf("With parent %s, the cohorts %s (as the cluster has them and this plan declares them) form a loop. Kueue admits "+
			"nothing to any ClusterQueue below a loop until it is broken, and says so on no condition: every job queued there waits. "+
			"Give one of them another parent, or none.", c.Parent, loop),
	}}
}

// overlay is the cluster's objects with each declared one in place of the cluster's of its name:
// those the plan does not declare, then the declared ones in the order of their names.
func overlay[T any](cluster []T, declared map[string]T, name func(T) string) []T {
	var out []T
	for _, o := range cluster {
		if _, ok := declared[name(o)]; !ok {
			out = append(out, o)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(declared)) {
		out = append(out, declared[n])
	}
	return out
}
