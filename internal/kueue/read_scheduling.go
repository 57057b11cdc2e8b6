package kueue

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// What Kueue schedules with, read from its objects: a Cohort's parent and quotas, a
// ClusterQueue's flavor fungibility, and a Workload's pod sets, priority and the quota it holds.

// ReadCohort reads a Cohort object.
func ReadCohort(obj *unstructured.Unstructured) CohortSpec {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	return CohortSpec{Name: obj.GetName(), Parent: str(spec, "parentName"), ResourceGroups: readResourceGroups(spec),
		FairSharingWeight: readWeight(spec)}
}

// ReadFungibility reads a ClusterQueue's flavor fungibility; what it leaves unset is Kueue's
// default (NewSnapshot fills it).
func ReadFungibility(obj *unstructured.Unstructured) Fungibility {
	f, _, _ := unstructured.NestedMap(obj.Object, "spec", "flavorFungibility")
	return Fungibility{WhenCanBorrow: str(f, "whenCanBorrow"), WhenCanPreempt: str(f, "whenCanPreempt"), Preference: str(f, "preference")}
}

// ReadSchedulingWorkload reads a Workload as Kueue schedules it: pending in the ClusterQueue
// its LocalQueue (localQueues: "namespace/name" -> ClusterQueue) points at, or holding the quota
// its admission gives it. What each pod requests is what Kueue last said it counts
// (status.resourceRequests: with its namespace's LimitRange defaults, its RuntimeClass's overhead
// and Kueue's own resource settings applied), else what its templates request. ok is false for
// one Kueue no longer schedules: finished, deactivated, held for its namespace, or in no known
// queue.
func ReadSchedulingWorkload(obj *unstructured.Unstructured, localQueues map[string]string) (wl *Workload, ok bool) {
	if c := condition(obj, "Finished"); c != nil && c["status"] == "True" {
		return nil, false
	}
	if c := condition(obj, "QuotaReserved"); c != nil && c["status"] == "False" {
		if message, _ := c["message"].(string); strings.EqualFold(message, NamespaceMismatch) {
			return nil, false // held out of its queue until its namespace's labels change
		}
	}
	if active, found, _ := unstructured.NestedBool(obj.Object, "spec", "active"); found && !active {
		return nil, false
	}
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	priority, _, _ := unstructured.NestedInt64(spec, "priority")
	wl = &Workload{Key: obj.GetNamespace() + "/" + obj.GetName(), UID: string(obj.GetUID()), Priority: int32(priority),
		Created: obj.GetCreationTimestamp().Time}
	podSets, _, _ := unstructured.NestedSlice(spec, "podSets")
	for _, p := range podSets {
		m, _ := p.(map[string]any)
		var template corev1.PodTemplateSpec
		if t, ok := m["template"].(map[string]any); ok {
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(t, &template)
		}
		ps := PodSetOf(str(m, "name"), count(m["count"]), template.Spec)
		ps.RequiredTopology, _, _ = unstructured.NestedString(m, "topologyRequest", "required")
		if counted := countedRequests(obj, ps.Name, ps.Count); counted != nil {
			ps.Requests = counted
		}
		wl.PodSets = append(wl.PodSets, ps)
	}
	if c := condition(obj, "Evicted"); c != nil && c["status"] == "True" {
		wl.Evicted = true
	}
	reserved := condition(obj, "QuotaReserved")
	if reserved != nil && reserved["status"] == "True" {
		wl.Queue, _, _ = unstructured.NestedString(obj.Object, "status", "admission", "clusterQueue")
		if at, err := time.Parse(time.RFC3339, str(reserved, "lastTransitionTime")); err == nil {
			wl.Reserved = at
		}
		wl.Usage = map[FlavorResource]int64{}
		assignments, _, _ := unstructured.NestedSlice(obj.Object, "status", "admission", "podSetAssignments")
		for _, a := range assignments {
			m, _ := a.(map[string]any)
			flavors, _, _ := unstructured.NestedStringMap(m, "flavors")
			usage, _, _ := unstructured.NestedMap(m, "resourceUsage")
			for r, v := range usage {
				q, err := resource.ParseQuantity(quantityString(v))
				if err == nil && flavors[r] != "" {
					wl.Usage[FlavorResource{flavors[r], r}] += Amount(r, q)
				}
			}
		}
		return wl, wl.Queue != ""
	}
	wl.Queue = localQueues[obj.GetNamespace()+"/"+str(spec, "queueName")]
	return wl, wl.Queue != ""
}

// countedRequests are what Kueue says it counts for each pod of a Workload's pod set (its
// status.resourceRequests, the pod set's totals), nil when it has not said.
func countedRequests(obj *unstructured.Unstructured, podSet string, pods int64) map[string]int64 {
	requests, _, _ := unstructured.NestedSlice(obj.Object, "status", "resourceRequests")
	for _, r := range requests {
		m, _ := r.(map[string]any)
		if str(m, "name") != podSet || pods <= 0 {
			continue
		}
		totals, _, _ := unstructured.NestedMap(m, "resources")
		out := map[string]int64{}
		for name, v := range totals {
			if q, err := resource.ParseQuantity(quantityString(v)); err == nil && !q.IsZero() {
				out[name] = Amount(name, q) / pods
			}
		}
		return out
	}
	return nil
}

// PodSetOf is the pod set of count pods of a pod spec: what each requests as Kueue counts it
// (limits where requests are missing, init containers and sidecars, overhead), and where it
// may run.
func PodSetOf(name string, count int64, spec corev1.PodSpec) PodSet {
	ps := PodSet{Name: name, Count: count, NodeSelector: spec.NodeSelector, Affinity: spec.Affinity, Tolerations: spec.Tolerations,
		Requests: map[string]int64{}}
	for r, q := range PodRequests(spec) {
		ps.Requests[string(r)] = Amount(string(r), q)
	}
	return ps
}

// readResourceGroups reads the resource groups of a ClusterQueue's or Cohort's spec.
func readResourceGroups(spec map[string]any) []ResourceGroup {
	var out []ResourceGroup
	groups, _, _ := unstructured.NestedSlice(spec, "resourceGroups")
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		group := ResourceGroup{}
		group.CoveredResources, _, _ = unstructured.NestedStringSlice(gm, "coveredResources")
		flavors, _, _ := unstructured.NestedSlice(gm, "flavors")
		for _, f := range flavors {
			fm, _ := f.(map[string]any)
			fq := FlavorQuotas{Name: str(fm, "name")}
			quotas, _, _ := unstructured.NestedSlice(fm, "resources")
			for _, q := range quotas {
				qm, _ := q.(map[string]any)
				fq.Resources = append(fq.Resources, Quota{Name: str(qm, "name"), Nominal: quantityString(qm["nominalQuota"]),
					BorrowingLimit: quantityString(qm["borrowingLimit"]), LendingLimit: quantityString(qm["lendingLimit"])})
			}
			group.Flavors = append(group.Flavors, fq)
		}
		out = append(out, group)
	}
	return out
}

// PodRequests are what the scheduler, and Kueue, count for a pod (component-helpers'
// PodRequests: the containers' sum, or the largest init container, sidecars and overhead
// included), with each container's limits standing for the requests it does not set, as the API
// server defaults a pod's (a job's templates are not defaulted). Zero requests are left out.
func PodRequests(spec corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range containers {
			r := &containers[i].Resources
			for name, q := range r.Limits {
				if _, set := r.Requests[name]; !set {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	sum := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for name, q := range sum {
		if q.IsZero() {
			delete(sum, name)
		}
	}
	return sum
}

// AdjustPodSpec is a pod set's template as Kueue v0.19.2 counts it (workload.AdjustResources), in
// its order: the RuntimeClass's overhead where the template has none; then the namespace's
// LimitRange defaults for containers (each container's and init container's default limits and
// default requests where it sets none, the first LimitRange that says one winning); PodRequests
// then lets each container's limits stand for the requests it still lacks. So a container that
// sets a limit alone, in a namespace whose LimitRange has a default request, counts that request,
// as in Kueue. (A LimitRange of type Pod applies only to pods with pod-level resources, which no
// job of this provider sets.)
func AdjustPodSpec(spec corev1.PodSpec, limitRanges []corev1.LimitRange, overhead corev1.ResourceList) corev1.PodSpec {
	out := *spec.DeepCopy()
	if out.RuntimeClassName != nil && out.Overhead == nil && len(overhead) > 0 {
		out.Overhead = overhead.DeepCopy()
	}
	limits, requests := corev1.ResourceList{}, corev1.ResourceList{}
	for _, lr := range limitRanges {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for name, q := range item.Default {
				if _, set := limits[name]; !set {
					limits[name] = q
				}
			}
			for name, q := range item.DefaultRequest {
				if _, set := requests[name]; !set {
					requests[name] = q
				}
			}
		}
	}
	for _, containers := range [][]corev1.Container{out.Containers, out.InitContainers} {
		for i := range containers {
			r := &containers[i].Resources
			r.Limits = withDefaults(r.Limits, limits)
			r.Requests = withDefaults(r.Requests, requests)
		}
	}
	return out
}

// withDefaults is list with each of defaults it lacks.
func withDefaults(list, defaults corev1.ResourceList) corev1.ResourceList {
	for name, q := range defaults {
		if _, set := list[name]; set {
			continue
		}
		if list == nil {
			list = corev1.ResourceList{}
		}
		list[name] = q.DeepCopy()
	}
	return list
}
