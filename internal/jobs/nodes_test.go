package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSummarizeNodes(t *testing.T) {
	gpuNode := func(name, taint string, ready corev1.ConditionStatus) corev1.Node {
		return corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"gpu": "true"}},
			Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: taint, Value: "invalid", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")},
				Allocatable: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("6"), corev1.ResourceCPU: resource.MustParse("63"), corev1.ResourceMemory: resource.MustParse("500Gi")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
			},
		}
	}
	nodes := []corev1.Node{gpuNode("n3", "ssd_node", corev1.ConditionTrue), gpuNode("n1", "gpu_node", corev1.ConditionFalse), {ObjectMeta: metav1.ObjectMeta{Name: "cp"}}}
	got := SummarizeNodes(nodes, "", NodeFilter{TaintKey: "gpu_node"})
	want := []Node{{Name: "n1", Labels: map[string]string{"gpu": "true"}, Taints: []string{"gpu_node=invalid:NoSchedule"},
		GPUCapacity: 8, GPUAllocatable: 6, CPUAllocatable: "63", MemoryAllocatable: "500Gi", Ready: false, Schedulable: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if all := SummarizeNodes(nodes, "", NodeFilter{}); len(all) != 3 || all[0].Name != "cp" || all[2].Name != "n3" || !all[2].Ready {
		t.Errorf("unfiltered: %+v", all)
	}
}
