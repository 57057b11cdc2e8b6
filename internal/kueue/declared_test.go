package kueue

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Kueue never admits a job whose queue, as declared, cannot take it whatever else runs: a
// resource no resource group covers (a launcher's CPU in a GPU-only queue), a flavor whose taint
// the pods do not tolerate, more than the queue's quota when it has no cohort. It may admit one
// that asks for more than its quota when its cohort can lend, and one whose flavor the plan does
// not declare: those are not certain.
func TestNeverAdmitsOnlyWhatTheDeclaredQueueMakesCertain(t *testing.T) {
	gpuOnly := ClusterQueueSpec{Name: "gpus", ResourceGroups: []ResourceGroup{{CoveredResources: []string{"nvidia.com/gpu"},
		Flavors: []FlavorQuotas{{Name: "a100", Resources: []Quota{{Name: "nvidia.com/gpu", Nominal: "8"}}}}}}}
	launcherAndWorkers := &Workload{Key: "default/mpi", Created: t0, PodSets: []PodSet{
		{Name: "launcher", Count: 1, Requests: map[string]int64{"cpu": 500}},
		{Name: "worker", Count: 2, Requests: map[string]int64{"nvidia.com/gpu": 1}},
	}}
	workersOnly := &Workload{Key: "default/mpi", Created: t0, PodSets: []PodSet{{Name: "worker", Count: 2, Requests: map[string]int64{"nvidia.com/gpu": 1}}}}
	tainted := []FlavorSpec{{Name: "a100", NodeTaints: []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}}}
	inCohort := gpuOnly
	inCohort.Cohort = "research"
	for _, tc := range []struct {
		name    string
		queue   ClusterQueueSpec
		flavors []FlavorSpec
		wl      *Workload
		want    string // a part of the reason; "" for none
	}{
		{"a resource the queue does not cover", gpuOnly, flavors("a100"), launcherAndWorkers, "pod set launcher: resource cpu unavailable in ClusterQueue"},
		{"what the queue covers", gpuOnly, flavors("a100"), workersOnly, ""},
		{"an untolerated taint", gpuOnly, tainted, workersOnly, "untolerated taint"},
		{"more than its quota without a cohort", gpuOnly, flavors("a100"), job16(workersOnly), "maximum capacity (8)"},
		{"more than its quota in a cohort", inCohort, flavors("a100"), job16(workersOnly), ""},
		{"a flavor not declared", gpuOnly, nil, workersOnly, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NeverAdmits(tc.queue, tc.flavors, tc.wl)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("NeverAdmits = %q, want %q", got, tc.want)
			}
		})
	}
}

func job16(wl *Workload) *Workload {
	w := *wl
	w.PodSets = []PodSet{{Name: "worker", Count: 16, Requests: map[string]int64{"nvidia.com/gpu": 1}}}
	return &w
}

// The plan's own objects replace the cluster's: a ClusterQueue it changes is seen with its new
// quota, one it adds beside those of the cluster; a LocalQueue's queue is known once declared, and
// a declared ClusterQueue's flavors all declared make the queue certain.
func TestDeclaredObjectsOverlayTheClustersAndNameTheMissing(t *testing.T) {
	d := NewDeclared()
	cluster := []ClusterQueueSpec{cpuQueue("team-a", "", Preemption{}, cpuFlavor("default", "2", "")), cpuQueue("team-b", "", Preemption{}, cpuFlavor("default", "2", ""))}
	d.ClusterQueue(cpuQueue("team-a", "", Preemption{}, cpuFlavor("default", "8", "")))
	d.ClusterQueue(cpuQueue("team-c", "", Preemption{}, cpuFlavor("spot", "4", "")))
	d.LocalQueue("default/c", "team-c")
	_, queues, lqs := d.Overlay(flavors("default"), cluster, map[string]string{"default/a": "team-a"})
	nominal := map[string]string{}
	for _, q := range queues {
		nominal[q.Name] = q.ResourceGroups[0].Flavors[0].Resources[0].Nominal
	}
	if nominal["team-a"] != "8" || nominal["team-b"] != "2" || nominal["team-c"] != "4" || len(queues) != 3 {
		t.Errorf("queues after the plan: %v", nominal)
	}
	if lqs["default/a"] != "team-a" || lqs["default/c"] != "team-c" {
		t.Errorf("LocalQueues after the plan: %v", lqs)
	}
	if _, _, ok := d.Queue("default/c"); ok {
		t.Error("team-c's flavor spot is not declared, yet its queue is certain")
	}
	d.Flavor(FlavorSpec{Name: "spot"})
	if q, fs, ok := d.Queue("default/c"); !ok || q.Name != "team-c" || len(fs) != 1 {
		t.Errorf("Queue(default/c) = %v, %v, %v", q.Name, fs, ok)
	}

	if f := d.CheckLocalQueue("default/x", "team-x", map[string]bool{"team-a": true}); len(f) != 1 || !strings.Contains(f[0].Summary, "LocalQueue default/x names ClusterQueue team-x") {
		t.Errorf("a LocalQueue of no ClusterQueue: %v", f)
	}
	for what, known := range map[string]map[string]bool{"in the cluster": {"team-b": true}, "cluster unknown": nil} {
		if f := d.CheckLocalQueue("default/x", "team-b", known); len(f) != 0 {
			t.Errorf("%s: %v", what, f)
		}
	}
	if f := d.CheckLocalQueue("default/c", "team-c", map[string]bool{}); len(f) != 0 {
		t.Errorf("a LocalQueue of a declared ClusterQueue: %v", f)
	}
	q := cpuQueue("team-d", "", Preemption{}, cpuFlavor("spot", "4", ""), cpuFlavor("h100", "4", ""))
	if f := d.CheckClusterQueue(q, map[string]bool{"default": true}); len(f) != 1 || !strings.Contains(f[0].Summary, "ClusterQueue team-d names ResourceFlavor h100") {
		t.Errorf("a ClusterQueue of a flavor nowhere: %v", f)
	}
}

// The devices a plan's queued jobs ask for are counted per queue and in all, beside what each
// queue may still use now: its unused quota in every flavor of the group that covers the device,
// and what its cohort can lend it (team-b: its own 2, and team-a's unused 1 of a100 and 2 of spot);
// CPU is not a device.
func TestTheTallySaysTheDevicesAskedForBesideWhatTheQueuesHaveFree(t *testing.T) {
	gpus := func(name, cohort, a100, spot string) ClusterQueueSpec {
		return ClusterQueueSpec{Name: name, Cohort: cohort, ResourceGroups: []ResourceGroup{{CoveredResources: []string{"nvidia.com/gpu"}, Flavors: []FlavorQuotas{
			{Name: "a100", Resources: []Quota{{Name: "nvidia.com/gpu", Nominal: a100}}}, {Name: "spot", Resources: []Quota{{Name: "nvidia.com/gpu", Nominal: spot}}}}}}}
	}
	used := &Workload{Key: "default/old", Queue: "team-a", PodSets: []PodSet{{Name: "worker", Count: 3, Requests: map[string]int64{"nvidia.com/gpu": 1}}},
		Usage: map[FlavorResource]int64{{"a100", "nvidia.com/gpu"}: 3}}
	s := snapshot(t, flavors("a100", "spot"), []ClusterQueueSpec{gpus("team-a", "research", "4", "2"), gpus("team-b", "research", "2", "0")}, used)
	if free, ok := s.Free("team-a", "nvidia.com/gpu"); !ok || free != 5 {
		t.Errorf("team-a's free GPUs = %d, %v; want 1 of a100 + 2 of spot + 2 its cohort lends", free, ok)
	}
	tally := Tally{}
	tally.Add(&Workload{Queue: "team-a", PodSets: []PodSet{{Name: "launcher", Count: 1, Requests: map[string]int64{"cpu": 500}},
		{Name: "worker", Count: 4, Requests: map[string]int64{"nvidia.com/gpu": 2, "rdma/hca": 1}}}})
	tally.Add(&Workload{Queue: "team-b", PodSets: []PodSet{{Name: "worker", Count: 2, Requests: map[string]int64{"nvidia.com/gpu": 1}}}})
	want := "ClusterQueue team-a: 8 nvidia.com/gpu (5 free now), 4 rdma/hca (not covered); ClusterQueue team-b: 2 nvidia.com/gpu (5 free now); " +
		"in all: 10 nvidia.com/gpu, 4 rdma/hca"
	if got := tally.String(s); got != want {
		t.Errorf("tally:\n got %s\nwant %s", got, want)
	}
}

// A declared Cohort whose parent closes a loop with the cluster's cohorts and those declared
// before it is found, naming the loop; one that ends at a root is not; nothing is said when the
// cluster's cohorts cannot be read.
func TestADeclaredCohortClosingALoopIsFound(t *testing.T) {
	d := NewDeclared()
	cluster := []CohortSpec{{Name: "a", Parent: "b"}, {Name: "b"}}
	d.Cohort(CohortSpec{Name: "c", Parent: "a"})
	if f := d.CheckCohort(CohortSpec{Name: "b", Parent: "c"}, cluster); len(f) != 1 || !strings.Contains(f[0].Summary, "a -> b -> c -> a") {
		t.Errorf("findings %+v; want the loop a -> b -> c -> a", f)
	}
	if f := d.CheckCohort(CohortSpec{Name: "b", Parent: "root"}, cluster); len(f) != 0 {
		t.Errorf("findings %+v for a cohort ending at a root", f)
	}
	if f := d.CheckCohort(CohortSpec{Name: "b", Parent: "c"}, nil); len(f) != 0 {
		t.Errorf("findings %+v without the cluster's cohorts", f)
	}
}
