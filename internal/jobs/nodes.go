package jobs

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// Node is what a platform team looks at before placing jobs: `kubectl get nodes` plus taints
// and GPUs.
type Node struct {
	Name              string
	Labels            map[string]string
	Taints            []string // key=value:Effect, as `kubectl taint` writes them
	GPUCapacity       int64
	GPUAllocatable    int64
	CPUAllocatable    string
	MemoryAllocatable string
	Ready             bool
	// Schedulable: not cordoned (spec.unschedulable is false).
	Schedulable bool
}

// NodeFilter selects nodes by taint key (empty: any); label selection is done by the API.
type NodeFilter struct {
	TaintKey string
}

// SummarizeNodes turns nodes into summaries, sorted by name, keeping those that pass the filter.
func SummarizeNodes(nodes []corev1.Node, gpuResource string, f NodeFilter) []Node {
	if gpuResource == "" {
		gpuResource = DefaultGPUResource
	}
	out := []Node{}
	for _, n := range nodes {
		if f.TaintKey != "" && !hasTaintKey(n, f.TaintKey) {
			continue
		}
		s := Node{Name: n.Name, Labels: n.Labels}
		for _, t := range n.Spec.Taints {
			s.Taints = append(s.Taints, t.ToString())
		}
		gpu := corev1.ResourceName(gpuResource)
		if q, ok := n.Status.Capacity[gpu]; ok {
			s.GPUCapacity = q.Value()
		}
		if q, ok := n.Status.Allocatable[gpu]; ok {
			s.GPUAllocatable = q.Value()
		}
		if q, ok := n.Status.Allocatable[corev1.ResourceCPU]; ok {
			s.CPUAllocatable = q.String()
		}
		if q, ok := n.Status.Allocatable[corev1.ResourceMemory]; ok {
			s.MemoryAllocatable = q.String()
		}
		s.Ready = kueue.NodeReady(n)
		s.Schedulable = !n.Spec.Unschedulable
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func hasTaintKey(n corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
