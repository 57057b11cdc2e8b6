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

// NoTASFlavor is Kueue's message for a workload whose queue has topology flavors alone (every
// flavor it names has a topology) and one of whose pod sets was given no flavor (it asks for
// nothing the queue covers): Kueue implies Topology Aware Scheduling for every pod set there, and
// that needs a flavor. "" otherwise. assigned are the pod sets' flavors by resource.
func NoTASFlavor(queue ClusterQueueSpec, flavors []FlavorSpec, wl *Workload, assigned map[string]map[string]string) string {
	topology := map[string]string{}
	for _, f := range flavors {
		topology[f.Name] = f.Topology
	}
	named := false
	for _, g := range queue.ResourceGroups {
		for _, f := range g.Flavors {
			if topology[f.Name] == "" {
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
