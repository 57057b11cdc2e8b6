package kueue

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// Kueue v0.19.2's flavor assignment (pkg/scheduler/flavorassigner), for a workload of pod sets
// without topology requests: each pod set in turn, each of its resource groups given the first
// flavor, in the ClusterQueue's order, whose nodes the pods may run on and whose quota holds them
// (or, by the queue's flavor fungibility, the best of them all).

// Mode is what a flavor assignment lets Kueue do with a workload now.
type Mode int

const (
	// NoFit: the workload does not fit, and preempting would not make it.
	NoFit Mode = iota
	// Preempt: it fits once other workloads are preempted (or, with no candidates, never now).
	Preempt
	// Fit: it fits in the unused quota.
	Fit
)

func (m Mode) String() string { return [...]string{"NoFit", "Preempt", "Fit"}[m] }

// preemptionMode is flavorassigner's finer mode, worst first.
type preemptionMode int

const (
	modeNoFit preemptionMode = iota
	modeNoCandidates
	modePreempt
	modeReclaim
	modeFit
)

func (m preemptionMode) public() Mode {
	switch m {
	case modeNoFit:
		return NoFit
	case modeFit:
		return Fit
	}
	return Preempt
}

// granular is a mode and the borrowing it needs (0: none).
type granular struct {
	mode   preemptionMode
	borrow int
}

var (
	worstGranular = granular{mode: modeNoFit, borrow: int(^uint(0) >> 1)}
	bestGranular  = granular{mode: modeFit}
)

// Fungibility is a ClusterQueue's flavorFungibility: whether a flavor that needs borrowing or
// preemption is taken (MayStopSearch) or the next ones are tried first (TryNextFlavor), and
// which of borrowing and preemption it prefers when it must choose.
type Fungibility struct {
	WhenCanBorrow, WhenCanPreempt, Preference string
}

// The fungibility Kueue gives a ClusterQueue that says nothing.
const (
	MayStopSearch           = "MayStopSearch"
	TryNextFlavor           = "TryNextFlavor"
	PreemptionOverBorrowing = "PreemptionOverBorrowing"
)

// preferred says whether a is preferred to b (flavorassigner's isPreferred). Before v0.19.1 a mode
// without preemption candidates ranked as any other preemption (v0.17 here).
func preferred(a, b granular, f Fungibility, r Release) bool {
	if a.mode == modeNoFit {
		return false
	}
	if b.mode == modeNoFit {
		return true
	}
	if r != V017 && (a.mode == modeNoCandidates) != (b.mode == modeNoCandidates) {
		return a.mode != modeNoCandidates
	}
	if f.Preference == PreemptionOverBorrowing {
		if a.borrow != b.borrow {
			return a.borrow < b.borrow
		}
		return a.mode > b.mode
	}
	if a.mode != b.mode {
		return a.mode > b.mode
	}
	return a.borrow < b.borrow
}

// tryNext says whether, having found g in a flavor, the next flavor is tried.
func tryNext(g granular, f Fungibility) bool {
	switch {
	case g.mode == modeNoFit || g.mode == modeNoCandidates:
		return true
	case (g.mode == modePreempt || g.mode == modeReclaim) && f.WhenCanPreempt == TryNextFlavor:
		return true
	}
	return g.borrow > 0 && f.WhenCanBorrow == TryNextFlavor
}

// An Assignment is the flavors Kueue would give a workload's pod sets, and what it can do with it.
type Assignment struct {
	Mode Mode
	// Borrowing is the height of the cohort it borrows from, 0 when its queue's quota holds it.
	Borrowing int
	// Flavors are each pod set's flavor by resource.
	Flavors map[string]map[string]string
	// Usage is what it would hold, by flavor and resource.
	Usage map[FlavorResource]int64
	// reasons are why each pod set does not fit now, by pod set, in order.
	reasons []podSetReasons
	// needs are, by mode, the flavor-resources whose quota needs preemption.
	needs map[FlavorResource]bool
}

type podSetReasons struct {
	name    string
	reasons []string
}

// Message is Kueue's message about a workload it did not admit: why each pod set found no
// flavor, as its Workload's QuotaReserved condition says it.
func (a Assignment) Message() string {
	var parts []string
	for _, ps := range a.reasons {
		if len(ps.reasons) == 0 {
			continue
		}
		r := slices.Clone(ps.reasons)
		sort.Strings(r)
		parts = append(parts, fmt.Sprintf("couldn't assign flavors to pod set %s: %s", ps.name, strings.Join(r, ", ")))
	}
	return strings.Join(parts, "; ")
}

// podSetTotal is a pod set's requests for all its pods, with the pods themselves where the
// queue counts them.
func (q *queueState) podSetTotal(ps PodSet) map[string]int64 {
	total := make(map[string]int64, len(ps.Requests)+1)
	for r, v := range ps.Requests {
		total[r] = v * ps.Count
	}
	if q.groupOf(string(corev1.ResourcePods)) != nil {
		total[string(corev1.ResourcePods)] = ps.Count
	}
	return total
}

// assign is the flavor assignment of wl in its queue, on the snapshot's quota as it is now.
func (s *Snapshot) assign(q *queueState, wl *Workload) Assignment {
	a := Assignment{Mode: Fit, Flavors: map[string]map[string]string{}, Usage: map[FlavorResource]int64{}, needs: map[FlavorResource]bool{}}
	for _, ps := range wl.PodSets {
		requests := q.podSetTotal(ps)
		flavors := map[string]string{}
		var reasons []string
		mode := bestGranular
		failed := false
		for _, r := range sortedKeys(requests) {
			if _, done := flavors[r]; done {
				continue
			}
			if q.groupOf(r) == nil && requests[r] == 0 {
				continue
			}
			found, g, why := s.flavorFor(q, wl, ps, requests, r, a.Usage)
			reasons = append(reasons, why...)
			if len(found) == 0 {
				failed = true
				break
			}
			for res, f := range found {
				flavors[res] = f
			}
			if preferred(mode, g, q.fungibility, s.release) {
				mode = g
			}
		}
		a.reasons = append(a.reasons, podSetReasons{name: ps.Name, reasons: reasons})
		if failed {
			a.Mode = NoFit
			return a
		}
		a.Flavors[ps.Name] = flavors
		for r, v := range requests {
			if f, ok := flavors[r]; ok {
				a.Usage[FlavorResource{f, r}] += v
			}
		}
		if m := mode.mode.public(); m < a.Mode {
			a.Mode = m
		}
		a.Borrowing = max(a.Borrowing, mode.borrow)
	}
	for fr, v := range a.Usage {
		if v > q.node.available(fr) {
			a.needs[fr] = true
		}
	}
	return a
}

// flavorFor is the flavor of the resource group of r for the pod set (its resources all in one
// flavor), the mode it gives, and the reasons the flavors tried do not fit (findFlavorForPodSets);
// none when no flavor can hold it.
func (s *Snapshot) flavorFor(q *queueState, wl *Workload, ps PodSet, requests map[string]int64, r string, assumed map[FlavorResource]int64) (map[string]string, granular, []string) {
	g := q.groupOf(r)
	if g == nil {
		return nil, worstGranular, []string{fmt.Sprintf("resource %s unavailable in ClusterQueue", r)}
	}
	var reasons []string
	var best map[string]string
	bestMode := worstGranular
	// Kueue v0.17 matches a pod set's node selector and affinity against a flavor by the label keys
	// of every flavor of the group (v0.17.6 and v0.18.2 took the flavor's own keys, as v0.19 does).
	var groupKeys map[string]bool
	if s.release == V017 {
		groupKeys = map[string]bool{}
		for _, f := range g.flavors {
			for k := range s.flavors[f].NodeLabels {
				groupKeys[k] = true
			}
		}
	}
	for _, f := range g.flavors {
		if why := s.flavorRefuses(f, ps, groupKeys); why != "" {
			reasons = append(reasons, why)
			continue
		}
		assignment := map[string]string{}
		mode := bestGranular
		for _, res := range g.covered {
			v, requested := requests[res]
			if !requested {
				continue
			}
			fr := FlavorResource{f, res}
			m, borrow, why := s.fitsQuota(q, wl, fr, assumed[fr], v)
			reasons = append(reasons, why...)
			if this := (granular{m, borrow}); preferred(mode, this, q.fungibility, s.release) {
				mode = this
			}
			if mode.mode == modeNoFit {
				continue
			}
			assignment[res] = f
		}
		if !tryNext(mode, q.fungibility) {
			return assignment, mode, nil
		}
		if preferred(mode, bestMode, q.fungibility, s.release) {
			best, bestMode = assignment, mode
		}
	}
	if bestMode.mode == modeFit {
		return best, bestMode, nil
	}
	return best, bestMode, reasons
}

// flavorRefuses says why the pod set cannot use flavor f's nodes: a taint it does not tolerate
// (with the flavor's tolerations), or a node selector or required affinity the flavor's labels
// do not match (of keys, or when nil of the keys the flavor labels); "" when it can.
func (s *Snapshot) flavorRefuses(name string, ps PodSet, keys map[string]bool) string {
	f, ok := s.flavors[name]
	if !ok {
		return fmt.Sprintf("flavor %s not found", name)
	}
	tolerations := append(slices.Clone(ps.Tolerations), f.Tolerations...)
	if taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), f.NodeTaints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true); untolerated {
		return fmt.Sprintf("untolerated taint %s in flavor %s", taint, name)
	}
	if keys == nil {
		keys = map[string]bool{}
		for k := range f.NodeLabels {
			keys[k] = true
		}
	}
	spec := corev1.PodSpec{}
	for k, v := range ps.NodeSelector {
		if keys[k] {
			if spec.NodeSelector == nil {
				spec.NodeSelector = map[string]string{}
			}
			spec.NodeSelector[k] = v
		}
	}
	if ps.Affinity != nil && ps.Affinity.NodeAffinity != nil && ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		var terms []corev1.NodeSelectorTerm
		for _, t := range ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			var exprs []corev1.NodeSelectorRequirement
			for _, e := range t.MatchExpressions {
				if keys[e.Key] {
					exprs = append(exprs, e)
				}
			}
			if len(exprs) == 0 {
				terms = nil
				break
			}
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: exprs})
		}
		if len(terms) > 0 {
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	match, err := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: spec}).Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: f.NodeLabels}})
	if err != nil || !match {
		return fmt.Sprintf("flavor %s doesn't match node affinity", name)
	}
	return ""
}

// fitsQuota is how v more of fr (assumed already counted by the workload's earlier pod sets)
// fits the queue's quota (fitsResourceQuota): at once, with the borrowing it needs; by
// preempting (or reclaiming) others, as the preemption oracle finds; or not at all, with why.
func (s *Snapshot) fitsQuota(q *queueState, wl *Workload, fr FlavorResource, assumed, v int64) (preemptionMode, int, []string) {
	available := q.node.available(fr)
	capacity := q.node.potentialAvailable(fr)
	val := assumed + v
	if val > capacity {
		return modeNoFit, 0, []string{fmt.Sprintf("insufficient quota for %s in flavor %s, previously considered podsets requests (%s) + current podset request (%s) > maximum capacity (%s)",
			fr.Resource, fr.Flavor, FormatAmount(fr.Resource, assumed), FormatAmount(fr.Resource, v), FormatAmount(fr.Resource, capacity))}
	}
	borrow, mayReclaim := q.node.borrowingLevel(fr, val)
	if val <= available {
		return modeFit, borrow, nil
	}
	why := []string{fmt.Sprintf("insufficient unused quota for %s in flavor %s, %s more needed", fr.Resource, fr.Flavor, FormatAmount(fr.Resource, val-available))}
	if q.node.quotas[fr].nominal >= val || mayReclaim || s.mayPreemptWhileBorrowing(q) {
		possibility, borrowAfter := s.simulatePreemption(q, wl, fr, val)
		return possibility, borrowAfter, why
	}
	return modeNoFit, borrow, why
}

// mayPreemptWhileBorrowing says whether the queue may preempt while it borrows
// (canPreemptWhileBorrowing): by its borrowWithinCohort policy, or under fair sharing by its
// reclaimWithinCohort.
func (s *Snapshot) mayPreemptWhileBorrowing(q *queueState) bool {
	return q.preemption.BorrowWithinCohort != "" && q.preemption.BorrowWithinCohort != Never ||
		s.fair != nil && q.preemption.ReclaimWithinCohort != Never
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
