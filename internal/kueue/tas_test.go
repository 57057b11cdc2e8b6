package kueue

import (
	"testing"
	"time"

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
	tas := map[string]FlavorSpec{"tas": {Name: "tas", Topology: "dc", NodeLabels: map[string]string{"a": "b"}}}
	if got, want := noTASFlavor(queue, tas, wl, assigned), "failed to assign flavors to pod set launcher: no TAS flavor assigned"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := noTASFlavor(queue, map[string]FlavorSpec{"tas": {Name: "tas"}}, wl, assigned); got != "" {
		t.Errorf("a flavor without a topology: %q", got)
	}
	assigned["launcher"] = map[string]string{"cpu": "tas"}
	if got := noTASFlavor(queue, tas, wl, assigned); got != "" {
		t.Errorf("every pod set with a flavor: %q", got)
	}
	// Kueue v0.17 admits the launcher without a flavor.
	s := &Snapshot{flavors: tas, release: V017}
	assigned["launcher"] = map[string]string{}
	if got := s.topologyHold(&queueState{spec: queue}, wl, assigned); got != "" {
		t.Errorf("Kueue v0.17's rules hold it: %q", got)
	}
	s.release = Current
	if got := s.topologyHold(&queueState{spec: queue}, wl, assigned); got == "" {
		t.Error("Kueue v0.18's rules admit it")
	}
}

// A workload Topology Aware Scheduling would not place is held, as Kueue holds it, and takes no
// quota from the workloads after it: in a queue of 32 GPUs on a topology flavor whose largest
// block holds 12 one-GPU pods, 17 pods that require one block wait with Kueue's message, and
// 17 after them that require nothing are admitted. Without the nodes the snapshot does not
// judge topology; a pod set of nothing in a queue of topology flavors alone is held all the same.
func TestPredictHoldsWhatTopologyWouldNotPlaceAndCountsNoQuotaForIt(t *testing.T) {
	nodes := []corev1.Node{gpuNode("a", "b1", "r1", "", 8, true), gpuNode("b", "b1", "r2", "", 4, true), gpuNode("c", "b2", "r3", "", 8, true)}
	tas := []FlavorSpec{{Name: "tas", Topology: "dc", NodeLabels: map[string]string{"nvidia.com/gpu.present": "true"}}}
	queue := ClusterQueueSpec{Name: "q", ResourceGroups: []ResourceGroup{{CoveredResources: []string{"nvidia.com/gpu"},
		Flavors: []FlavorQuotas{{Name: "tas", Resources: []Quota{{Name: "nvidia.com/gpu", Nominal: "32"}}}}}}}
	gpuJob := func(key string, created time.Duration, pods int64, level string) *Workload {
		return &Workload{Key: key, UID: key, Queue: "q", Created: t0.Add(created),
			PodSets: []PodSet{{Name: "worker", Count: pods, Requests: map[string]int64{"nvidia.com/gpu": 1}, RequiredTopology: level}}}
	}
	s := snapshot(t, tas, []ClusterQueueSpec{queue})
	s.SetNodes(nodes)
	got := s.Predict([]*Workload{gpuJob("big", 0, 17, "example.com/block"), gpuJob("after", time.Second, 17, "")})
	if want := `couldn't assign flavors to pod set worker: topology "dc" allows to fit only 12 out of 17 pod(s)`; got[0].Admitted || got[0].Message != want {
		t.Errorf("the job no block holds: %+v, want held with %q", got[0], want)
	}
	if !got[1].Admitted {
		t.Errorf("the job after it: %+v, want admitted (the held job takes no quota)", got[1])
	}
	fits := s.Predict([]*Workload{gpuJob("small", 0, 12, "example.com/block")})
	if !fits[0].Admitted {
		t.Errorf("12 pods in one block of 12: %+v", fits[0])
	}
	blind := snapshot(t, tas, []ClusterQueueSpec{queue})
	if p := blind.Predict([]*Workload{gpuJob("big", 0, 17, "example.com/block")}); !p[0].Admitted {
		t.Errorf("without nodes: %+v, want admitted by quota", p[0])
	}
	bare := &Workload{Key: "bare", UID: "bare", Queue: "q", PodSets: []PodSet{{Name: "launcher", Count: 1}, {Name: "worker", Count: 1, Requests: map[string]int64{"nvidia.com/gpu": 1}}}}
	if p := blind.Predict([]*Workload{bare}); p[0].Admitted || p[0].Message != "failed to assign flavors to pod set launcher: no TAS flavor assigned" {
		t.Errorf("a pod set of nothing: %+v", p[0])
	}
}
