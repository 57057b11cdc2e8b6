package jobs

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seedNodes is the Arena walkthrough's layout, as the local cluster has it.
func seedNodes() []corev1.Node {
	node := func(name string, taint corev1.Taint, gpus string, labels map[string]string) corev1.Node {
		alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi")}
		if gpus != "" {
			alloc["nvidia.com/gpu"] = resource.MustParse(gpus)
		}
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{taint}},
			Status: corev1.NodeStatus{Allocatable: alloc, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	cp := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	gpu := corev1.Taint{Key: "gpu_node", Value: "invalid", Effect: corev1.TaintEffectNoSchedule}
	ssd := corev1.Taint{Key: "ssd_node", Value: "invalid", Effect: corev1.TaintEffectNoSchedule}
	present := map[string]string{"nvidia.com/gpu.present": "true"}
	return []corev1.Node{node("cp1", cp, "", nil), node("cp2", cp, "", nil), node("cp3", cp, "", nil),
		node("gpu1", gpu, "8", present), node("gpu2", gpu, "8", present), node("ssd1", ssd, "8", present)}
}

func worker(count int, gpus string, tolerations []string, selector map[string]string) RolePods {
	var tols []corev1.Toleration
	for _, s := range tolerations {
		t, err := ParseToleration(s)
		if err != nil {
			panic(err)
		}
		tols = append(tols, t)
	}
	c := corev1.Container{Name: "w"}
	if gpus != "" {
		c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
	}
	return RolePods{Role: "worker", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{c}, Tolerations: tols, NodeSelector: selector}}}
}

// labelled is nodes with the label key=value on the node named name.
func labelled(nodes []corev1.Node, name, key, value string) []corev1.Node {
	for i := range nodes {
		if nodes[i].Name == name {
			nodes[i].Labels = map[string]string{key: value}
		}
	}
	return nodes
}

func TestCheckPlacement(t *testing.T) {
	notReady := seedNodes()
	for i := range notReady {
		if notReady[i].Name == "gpu2" || notReady[i].Name == "ssd1" {
			notReady[i].Status.Conditions[0].Status = corev1.ConditionUnknown
		}
	}
	for name, tc := range map[string]struct {
		role  RolePods
		nodes []corev1.Node
		o     PlacementOptions
		want  []string // substrings of the one warning; none: no warning
	}{
		"untolerated gpu taint": {role: worker(2, "1", nil, nil), want: []string{"No node can host a worker pod",
			"2 nodes (gpu1, gpu2) have the taint gpu_node=invalid:NoSchedule, which it does not tolerate (tolerations = [\"gpu_node\"] would)",
			"node ssd1 has the taint ssd_node=invalid:NoSchedule", "3 nodes (cp1, cp2, cp3) have too little allocatable for its requests (1 nvidia.com/gpu)"}},
		"tolerated": {role: worker(2, "1", []string{"gpu_node"}, nil)},
		"all":       {role: worker(2, "1", []string{"all"}, nil)},
		"more gpus than any node": {role: worker(1, "16", []string{"all"}, nil), want: []string{"too little allocatable for its requests (16 nvidia.com/gpu)",
			"It asks for 16 nvidia.com/gpu; the most any Ready node has is 8."}},
		// The shortfall names what keeps the job off the nodes that have room: a taint, with the
		// toleration that would admit it, and the labels the selector lacks.
		"gang larger than the nodes": {role: worker(4, "8", []string{"gpu_node"}, nil), want: []string{
			"The nodes that can host a worker pod (gpu1, gpu2) hold 2 at most, but the job runs 4 at once (4 x 8 = 32 nvidia.com/gpu; those nodes have 16 in all)",
			"Nodes with room it cannot use: node ssd1 (room for 1) has the taint ssd_node=invalid:NoSchedule, which it does not tolerate (tolerations = [\"ssd_node\"] would)."}},
		"gang kept off by its selector": {role: worker(3, "8", []string{"all"}, map[string]string{"disk": "ssd"}), nodes: labelled(seedNodes(), "ssd1", "disk", "ssd"),
			want: []string{"hold 1 at most, but the job runs 3",
				"Nodes with room it cannot use: 2 nodes (gpu1, gpu2) (room for 2) lack the node selector's labels disk=ssd."}},
		"gang that fits several per node": {role: worker(4, "4", []string{"gpu_node"}, nil)},
		"selector no node matches": {role: worker(1, "1", []string{"all"}, map[string]string{"accelerator": "v100"}),
			want: []string{"6 nodes (cp1, cp2, cp3, gpu1, gpu2, ssd1) lack the node selector's labels accelerator=v100"}},
		"not ready nodes":                  {role: worker(2, "8", []string{"gpu_node"}, nil), nodes: notReady, want: []string{"hold 1 at most, but the job runs 2"}},
		"queued: Kueue's flavor tolerates": {role: worker(2, "1", nil, nil), o: PlacementOptions{Queued: true}},
		"queued: still larger than any node": {role: worker(1, "16", nil, nil), o: PlacementOptions{Queued: true},
			want: []string{"It asks for 16 nvidia.com/gpu; the most any Ready node has is 8."}},
		"no gpu asked: control plane tolerated": {role: worker(3, "", []string{"node-role.kubernetes.io/control-plane"}, nil)},
	} {
		t.Run(name, func(t *testing.T) {
			nodes := tc.nodes
			if nodes == nil {
				nodes = seedNodes()
			}
			got := CheckPlacement([]RolePods{tc.role}, nodes, tc.o)
			if len(tc.want) == 0 {
				if len(got) != 0 {
					t.Errorf("want no warning, got %q", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one warning, got %q", got)
			}
			if got[0].Role != "worker" {
				t.Errorf("the warning is about role %q", got[0].Role)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("warning %q\nlacks %q", got[0].Message, w)
				}
			}
		})
	}
}
