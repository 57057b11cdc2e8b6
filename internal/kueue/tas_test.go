package kueue

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func gpuNode(name, block, rack, taint string, gpus int64, ready bool) corev1.Node {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"nvidia.com/gpu.present": "true", "example.com/block": block, "example.com/rack": rack}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI),
			corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceCPU: resource.MustParse("63")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
	if taint != "" {
		n.Spec.Taints = []corev1.Taint{{Key: taint, Value: "invalid", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

// The largest domain of a level holds what its nodes' allocatable fits, node by node: block b1
// (nodes of 8 and 4 GPUs) holds 12 pods of 1 GPU, and 3 of 3 GPUs (2 and 1); a node not Ready, one whose taint neither the pods nor the flavor tolerate, one without
// the flavor's labels or the level's label, does not count.
func TestLargestDomainIsWhatItsNodesFitNodeByNode(t *testing.T) {
	nodes := []corev1.Node{
		gpuNode("a", "b1", "r1", "gpu_node", 8, true), gpuNode("b", "b1", "r2", "gpu_node", 4, true),
		gpuNode("c", "b2", "r3", "ssd_node", 8, true), gpuNode("d", "b2", "r4", "", 8, false),
	}
	flavor := FlavorSpec{Name: "gpu", NodeLabels: map[string]string{"nvidia.com/gpu.present": "true"},
		Tolerations: []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}, {Key: "ssd_node", Operator: corev1.TolerationOpExists}}}
	one := PodSet{Name: "worker", Count: 17, Requests: map[string]int64{"nvidia.com/gpu": 1, "cpu": 500}}
	for _, tc := range []struct {
		what   string
		ps     PodSet
		level  string
		flavor FlavorSpec
		fits   int64
		domain string
	}{
		{"1 GPU each, by block", one, "example.com/block", flavor, 12, "b1"},
		{"1 GPU each, by rack", one, "example.com/rack", flavor, 8, "r1"},
		{"3 GPUs each, by block", PodSet{Name: "worker", Count: 6, Requests: map[string]int64{"nvidia.com/gpu": 3}}, "example.com/block", flavor, 3, "b1"},
		{"without the flavor's tolerations", one, "example.com/block", FlavorSpec{Name: "gpu", NodeLabels: flavor.NodeLabels}, 0, ""},
		{"a level no node has", one, "example.com/hall", flavor, 0, ""},
	} {
		fits, domain := LargestDomain(tc.ps, tc.level, tc.flavor, nodes)
		if fits != tc.fits || domain != tc.domain {
			t.Errorf("%s: %d in %q, want %d in %q", tc.what, fits, domain, tc.fits, tc.domain)
		}
	}
	if got, want := NoDomainMessage("dc", 16, 17), `topology "dc" allows to fit only 16 out of 17 pod(s)`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got, want := NoDomainMessage("dc", 0, 17), `topology "dc" doesn't allow to fit any of 17 pod(s)`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// In a queue of topology flavors alone, a pod set given no flavor (a launcher that asks for
// nothing) is never placed: Kueue says no TAS flavor was assigned. A queue with a flavor of no
// topology, or pod sets that all have a flavor, are not refused.
func TestNoTASFlavorForAPodSetOfNothingInATopologyQueue(t *testing.T) {
	queue := ClusterQueueSpec{Name: "q", ResourceGroups: []ResourceGroup{{CoveredResources: []string{"nvidia.com/gpu"},
		Flavors: []FlavorQuotas{{Name: "tas", Resources: []Quota{{Name: "nvidia.com/gpu", Nominal: "8"}}}}}}}
	wl := &Workload{PodSets: []PodSet{{Name: "launcher", Count: 1}, {Name: "worker", Count: 2, Requests: map[string]int64{"nvidia.com/gpu": 1}}}}
	assigned := map[string]map[string]string{"launcher": {}, "worker": {"nvidia.com/gpu": "tas"}}
	tas := []FlavorSpec{{Name: "tas", Topology: "dc", NodeLabels: map[string]string{"a": "b"}}}
	if got, want := NoTASFlavor(queue, tas, wl, assigned), "failed to assign flavors to pod set launcher: no TAS flavor assigned"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := NoTASFlavor(queue, []FlavorSpec{{Name: "tas"}}, wl, assigned); got != "" {
		t.Errorf("a flavor without a topology: %q", got)
	}
	assigned["launcher"] = map[string]string{"cpu": "tas"}
	if got := NoTASFlavor(queue, tas, wl, assigned); got != "" {
		t.Errorf("every pod set with a flavor: %q", got)
	}
}
