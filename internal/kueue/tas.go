package kueue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// Topology Aware Scheduling at plan time, by Kueue v0.19.2's rules for a pod set that requires a
// topology level (pkg/cache/scheduler/tas_flavor_snapshot.go): the flavor's nodes (Ready,
// schedulable, carrying the flavor's node labels and the level's label, their NoSchedule and
// NoExecute taints tolerated by the pods with the flavor's tolerations) grouped into the level's
// domains by that label's value; a domain holds as many of the pods as its nodes' allocatable
// resources fit, node by node. What other pods use is not counted: the answer is the most any
// domain could ever hold as the nodes are.

// LargestDomain is how many of the pod set's pods the largest domain of level can hold on the
// flavor's nodes, and that domain's value ("" when no node qualifies).
func LargestDomain(ps PodSet, level string, flavor FlavorSpec, nodes []corev1.Node) (fits int64, domain string) {
	byDomain := map[string]int64{}
	tolerations := append(append([]corev1.Toleration(nil), ps.Tolerations...), flavor.Tolerations...)
	for i := range nodes {
		n := &nodes[i]
		value, ok := n.Labels[level]
		if !ok || n.Spec.Unschedulable || !NodeReady(*n) {
			continue
		}
		if !labels.SelectorFromSet(flavor.NodeLabels).Matches(labels.Set(n.Labels)) || !labels.SelectorFromSet(ps.NodeSelector).Matches(labels.Set(n.Labels)) {
			continue
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, true); untolerated {
			continue
		}
		byDomain[value] += podsFitting(ps.Requests, n.Status.Allocatable)
	}
	for d, v := range byDomain {
		if v > fits || v == fits && (domain == "" || d < domain) {
			fits, domain = v, d
		}
	}
	return fits, domain
}

// SetNodes gives the snapshot the cluster's nodes: with them, Predict holds a workload one of
// whose pod sets requires a topology level of which no domain could hold all its pods on the
// flavor quota gives it, as Kueue's Topology Aware Scheduling holds it, and that workload takes
// no quota from the ones after it. The snapshot only reads them; none at all is known too.
func (s *Snapshot) SetNodes(nodes []corev1.Node) {
	if nodes == nil {
		nodes = []corev1.Node{}
	}
	s.nodes = nodes
}

// topologyHold is Kueue's message for a workload that quota admits on assigned (its pod sets'
// flavors, by resource) and Topology Aware Scheduling does not place: a pod set without a flavor
// in a queue of topology flavors alone (noTASFlavor; from Kueue v0.18); with the nodes known, a pod set whose
// required level has no domain that holds all its pods (LargestDomain). "" when it is placed.
func (s *Snapshot) topologyHold(q *queueState, wl *Workload, assigned map[string]map[string]string) string {
	if s.release != V017 {
		if msg := noTASFlavor(q.spec, s.flavors, wl, assigned); msg != "" {
			return msg
		}
	}
	if s.nodes == nil {
		return ""
	}
	for _, ps := range wl.PodSets {
		if ps.RequiredTopology == "" {
			continue
		}
		for _, resource := range sortedKeys(assigned[ps.Name]) {
			f, ok := s.flavors[assigned[ps.Name][resource]]
			if !ok || f.Topology == "" {
				continue
			}
			if fits, _ := LargestDomain(ps, ps.RequiredTopology, f, s.nodes); fits < ps.Count {
				return fmt.Sprintf("couldn't assign flavors to pod set %s: %s", ps.Name, NoDomainMessage(f.Topology, fits, ps.Count))
			}
			break
		}
	}
	return ""
}

// noTASFlavor is Kueue's message for a workload whose queue has topology flavors alone (every
// flavor it names has a topology) and one of whose pod sets was given no flavor (it asks for
// nothing the queue covers): Kueue implies Topology Aware Scheduling for every pod set there, and
// that needs a flavor. "" otherwise. assigned are the pod sets' flavors by resource.
func noTASFlavor(queue ClusterQueueSpec, flavors map[string]FlavorSpec, wl *Workload, assigned map[string]map[string]string) string {
	named := false
	for _, g := range queue.ResourceGroups {
		for _, f := range g.Flavors {
			if flavors[f.Name].Topology == "" {
				return ""
			}
			named = true
		}
	}
	if !named {
		return ""
	}
	for _, ps := range wl.PodSets {
		if len(assigned[ps.Name]) == 0 {
			return fmt.Sprintf("failed to assign flavors to pod set %s: no TAS flavor assigned", ps.Name)
		}
	}
	return ""
}

// NoDomainMessage is Kueue's message for a pod set no domain of its topology can hold: count
// pods, of which the largest domain holds fits.
func NoDomainMessage(topology string, fits, count int64) string {
	if fits == 0 {
		return fmt.Sprintf("topology %q doesn't allow to fit any of %d pod(s)", topology, count)
	}
	return fmt.Sprintf("topology %q allows to fit only %d out of %d pod(s)", topology, fits, count)
}

// podsFitting is how many pods of requests a node's allocatable resources hold, the pods
// resource included.
func podsFitting(requests map[string]int64, allocatable corev1.ResourceList) int64 {
	n := int64(-1)
	for r, v := range requests {
		if v <= 0 {
			continue
		}
		q := allocatable[corev1.ResourceName(r)]
		fit := Amount(r, q) / v
		if n < 0 || fit < n {
			n = fit
		}
	}
	if pods, ok := allocatable[corev1.ResourcePods]; ok && (n < 0 || pods.Value() < n) {
		n = pods.Value()
	}
	return max(n, 0)
}

// NodeReady says whether the node's Ready condition is True.
func NodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
