package jobs

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// RolePods is one role of a job: the pods of its template, Count of them running at once.
type RolePods struct {
	Role     string
	Count    int
	Template corev1.PodTemplateSpec
}

// replicaRoles are the roles of a Kubeflow job object: its replica specs under field (the role in
// lower case, as its pods' role label says it).
func replicaRoles(obj *unstructured.Unstructured, field string) ([]RolePods, error) {
	byType, _, _ := unstructured.NestedMap(obj.Object, "spec", field)
	var out []RolePods
	for replicaType, rs := range byType {
		m, _ := rs.(map[string]any)
		count := int64(1)
		if n, ok := m["replicas"].(int64); ok {
			count = n
		}
		template, _ := m["template"].(map[string]any)
		role, err := rolePods(strings.ToLower(replicaType), count, template)
		if err != nil {
			return nil, err
		}
		out = append(out, role)
	}
	return out, nil
}

// rolePods is a role of count pods of the template.
func rolePods(role string, count int64, template map[string]any) (RolePods, error) {
	var t corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(template, &t); err != nil {
		return RolePods{}, fmt.Errorf("role %s: %w", role, err)
	}
	return RolePods{Role: role, Count: int(count), Template: t}, nil
}

// PlacementOptions say what a placement check leaves out.
type PlacementOptions struct {
	// Queued: Kueue places the job, adding its flavors' node labels and tolerations, so only
	// what no flavor can change (a pod larger than every node) is checked.
	Queued bool
}

// CheckPlacement says, in the user's terms, which roles of a job no node of the cluster can
// host, with the scheduler's own rules (component-helpers): untolerated NoSchedule and NoExecute
// taints, the node selector and required affinity, unschedulable and not Ready nodes, and each
// node's allocatable resources (requests, or limits where no request is set, as the API server
// defaults them); and which roles as a whole need more pods than the nodes that can host one
// can hold together. Node usage by other pods is not counted: the cluster changes before apply,
// so what it says is that the job can never run here as it is, not that it will wait.
func CheckPlacement(roles []RolePods, nodes []corev1.Node, o PlacementOptions) []PlacementWarning {
	var warnings []PlacementWarning
	for _, r := range roles {
		if r.Count <= 0 {
			continue
		}
		for _, w := range checkRole(r, nodes, o) {
			warnings = append(warnings, PlacementWarning{Role: r.Role, Message: w})
		}
	}
	return warnings
}

// PlacementWarning says why a role of a job cannot be placed.
type PlacementWarning struct {
	Role    string
	Message string
}

type nodeFit struct {
	node  corev1.Node
	slots int64 // how many pods of the role its allocatable holds
}

func checkRole(r RolePods, nodes []corev1.Node, o PlacementOptions) []string {
	pod := &corev1.Pod{ObjectMeta: r.Template.ObjectMeta, Spec: r.Template.Spec}
	requests := kueue.PodRequests(pod.Spec)
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	what := "a " + r.Role + " pod"

	var fits []nodeFit
	untolerated := map[string][]string{} // taint -> nodes
	var unmatched, notReady, tooSmall []string
	// What keeps the role off nodes that have room for it: their pods' count by taint, and the
	// nodes whose labels the selector lacks, with theirs.
	untoleratedRoom := map[string]int64{}
	var unmatchedRoomy []string
	var unmatchedRoom int64
	largest := map[corev1.ResourceName]*resource.Quantity{}
	for _, n := range nodes {
		if !kueue.NodeReady(n) || n.Spec.Unschedulable {
			notReady = append(notReady, n.Name)
			continue
		}
		for name := range requests {
			if q, ok := n.Status.Allocatable[name]; ok && (largest[name] == nil || q.Cmp(*largest[name]) > 0) {
				largest[name] = ptr.To(q.DeepCopy())
			}
		}
		slots := fitCount(requests, n.Status.Allocatable)
		if !o.Queued {
			if match, _ := affinity.Match(&n); !match {
				unmatched = append(unmatched, n.Name)
				if slots > 0 {
					unmatchedRoomy, unmatchedRoom = append(unmatchedRoomy, n.Name), unmatchedRoom+slots
				}
				continue
			}
		}
		// Too small before untolerated: a toleration is worth suggesting only for a node that
		// would otherwise do.
		if slots == 0 {
			tooSmall = append(tooSmall, n.Name)
			continue
		}
		if !o.Queued {
			if t, found := v1helper.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
				return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
			}, false); found {
				key := t.ToString()
				untolerated[key] = append(untolerated[key], n.Name)
				untoleratedRoom[key] += slots
				continue
			}
		}
		fits = append(fits, nodeFit{node: n, slots: slots})
	}

	if len(fits) == 0 {
		var causes []string
		if len(notReady) > 0 {
			causes = append(causes, fmt.Sprintf("%s %s not Ready or unschedulable", nodesOf(notReady), verb(notReady, "is", "are")))
		}
		if len(unmatched) > 0 {
			causes = append(causes, fmt.Sprintf("%s %s the node selector's labels %s", nodesOf(unmatched), verb(unmatched, "lacks", "lack"), selectorString(pod.Spec)))
		}
		for _, taint := range slices.Sorted(maps.Keys(untolerated)) {
			causes = append(causes, fmt.Sprintf("%s %s the taint %s, which it does not tolerate (tolerations = [%q] would)",
				nodesOf(untolerated[taint]), verb(untolerated[taint], "has", "have"), taint, tolerationFor(taint)))
		}
		if len(tooSmall) > 0 {
			causes = append(causes, fmt.Sprintf("%s %s too little allocatable for its requests (%s)", nodesOf(tooSmall), verb(tooSmall, "has", "have"), requestString(requests)))
		}
		if len(nodes) == 0 {
			causes = append(causes, "the cluster has no nodes")
		}
		warning := fmt.Sprintf("No node can host %s: %s.", what, strings.Join(causes, "; "))
		// Larger than every node: no toleration, label or flavor helps.
		for _, name := range slices.Sorted(maps.Keys(requests)) {
			q := requests[name]
			if biggest := largest[name]; biggest == nil || q.Cmp(*biggest) > 0 {
				most := "no node has any"
				if biggest != nil {
					most = "the most any Ready node has is " + biggest.String()
				}
				warning += fmt.Sprintf(" It asks for %s %s; %s.", q.String(), name, most)
			}
		}
		return []string{warning}
	}

	var slots int64
	var names []string
	for _, f := range fits {
		slots += f.slots
		names = append(names, f.node.Name)
	}
	if slots >= int64(r.Count) {
		return nil
	}
	total := ""
	if gpu, ok := gpuRequest(requests); ok {
		var have resource.Quantity
		for _, f := range fits {
			if q, ok := f.node.Status.Allocatable[gpu.name]; ok {
				have.Add(q)
			}
		}
		need := gpu.q.DeepCopy()
		need.Mul(int64(r.Count))
		total = fmt.Sprintf(" (%d x %s = %s %s; those nodes have %s in all)", r.Count, gpu.q.String(), need.String(), gpu.name, have.String())
	}
	warning := fmt.Sprintf("The nodes that can host %s (%s) hold %d at most, but the job runs %d at once%s, so it cannot start as a whole.",
		what, strings.Join(names, ", "), slots, r.Count, total)
	// The way out: what keeps it off the nodes that have room.
	var ways []string
	for _, taint := range slices.Sorted(maps.Keys(untolerated)) {
		ways = append(ways, fmt.Sprintf("%s (room for %d) %s the taint %s, which it does not tolerate (tolerations = [%q] would)",
			nodesOf(untolerated[taint]), untoleratedRoom[taint], verb(untolerated[taint], "has", "have"), taint, tolerationFor(taint)))
	}
	if len(unmatchedRoomy) > 0 {
		ways = append(ways, fmt.Sprintf("%s (room for %d) %s the node selector's labels %s",
			nodesOf(unmatchedRoomy), unmatchedRoom, verb(unmatchedRoomy, "lacks", "lack"), selectorString(pod.Spec)))
	}
	if len(ways) > 0 {
		warning += " Nodes with room it cannot use: " + strings.Join(ways, "; ") + "."
	}
	return []string{warning}
}

// fitCount is how many pods of these requests a node's allocatable holds.
func fitCount(requests, allocatable corev1.ResourceList) int64 {
	slots := int64(-1)
	for name, q := range requests {
		have, ok := allocatable[name]
		if !ok {
			return 0
		}
		var n int64
		if q.MilliValue() > 0 {
			n = have.MilliValue() / q.MilliValue()
		}
		if slots < 0 || n < slots {
			slots = n
		}
	}
	if slots < 0 {
		return 1 << 30 // asks for nothing a node counts
	}
	return slots
}

type namedQuantity struct {
	name corev1.ResourceName
	q    resource.Quantity
}

// gpuRequest is the GPU-like extended resource a pod asks for, if any.
func gpuRequest(requests corev1.ResourceList) (namedQuantity, bool) {
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		if strings.Contains(string(name), "/") && !strings.HasPrefix(string(name), "hugepages-") {
			return namedQuantity{name, requests[name]}, true
		}
	}
	return namedQuantity{}, false
}

// tolerationFor is the toleration string (Arena's grammar) that tolerates a taint written as
// KEY=VALUE:EFFECT or KEY:EFFECT: the bare key, which tolerates it whatever its value and effect.
func tolerationFor(taint string) string {
	key, _, _ := strings.Cut(taint, ":")
	key, _, _ = strings.Cut(key, "=")
	return key
}

func selectorString(spec corev1.PodSpec) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(spec.NodeSelector)) {
		parts = append(parts, k+"="+spec.NodeSelector[k])
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil && spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		parts = append(parts, "and its required node affinity")
	}
	return strings.Join(parts, ", ")
}

func requestString(requests corev1.ResourceList) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		q := requests[name]
		parts = append(parts, q.String()+" "+string(name))
	}
	return strings.Join(parts, ", ")
}

// nodesOf names nodes: "node A", or "3 nodes (A, B, C)".
func nodesOf(names []string) string {
	if len(names) == 1 {
		return "node " + names[0]
	}
	return fmt.Sprintf("%d nodes (%s)", len(names), strings.Join(names, ", "))
}

func verb(names []string, one, many string) string {
	if len(names) == 1 {
		return one
	}
	return many
}
