package kueue

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func decode(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestClusterQueueReadsBackAsWritten(t *testing.T) {
	threshold := int32(100)
	spec := ClusterQueueSpec{
		Name: "vision", Cohort: "research", NamespaceSelector: map[string]string{"team": "vision"},
		QueueingStrategy: "StrictFIFO", StopPolicy: "Hold",
		ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu", "nvidia.com/gpu"}, Flavors: []FlavorQuotas{
			{Name: "gpu", Resources: []Quota{{Name: "cpu", Nominal: "64"}, {Name: "nvidia.com/gpu", Nominal: "4", BorrowingLimit: "4", LendingLimit: "2"}}},
		}}},
		Preemption:        Preemption{ReclaimWithinCohort: "Any", WithinClusterQueue: "LowerPriority", BorrowWithinCohort: "LowerPriority", MaxPriorityThreshold: &threshold},
		FairSharingWeight: "1500m",
	}
	obj, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "cohortName"); got != "research" {
		t.Errorf("v1beta2 names the cohort cohortName; got %q", got)
	}
	back, err := ReadClusterQueue(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !back.AdmitsFrom(map[string]string{"team": "vision", "other": "x"}) || back.AdmitsFrom(map[string]string{"team": "speech"}) {
		t.Errorf("the selector read back is %v, want team=vision", back.Namespaces)
	}
	back.Namespaces = nil
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("read back\n%+v\nwant\n%+v", back, spec)
	}
}

// A ClusterQueue the provider's resource cannot say (a namespace selector with expressions, or
// none) is still read whole for Kueue's model, quotas and preemption included, and its selector
// is Kueue's: expressions as written, none matching no namespace.
func TestAClusterQueueOfAnySelectorIsReadWhole(t *testing.T) {
	queue := func(selector any) *unstructured.Unstructured {
		spec := map[string]any{"cohortName": "research",
			"resourceGroups": []any{map[string]any{"coveredResources": []any{"nvidia.com/gpu"}, "flavors": []any{
				map[string]any{"name": "gpu", "resources": []any{map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "8"}}}}}},
			"preemption": map[string]any{"withinClusterQueue": "LowerPriority"}}
		if selector != nil {
			spec["namespaceSelector"] = selector
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
			"metadata": map[string]any{"name": "q"}, "spec": spec}}
	}
	expressions := map[string]any{"matchExpressions": []any{map[string]any{"key": "team", "operator": "In", "values": []any{"vision", "speech"}}}}
	for _, tc := range []struct {
		name     string
		selector any
		admits   map[string]bool // by the team label's value
	}{
		{"expressions", expressions, map[string]bool{"vision": true, "speech": true, "audio": false}},
		{"none", nil, map[string]bool{"vision": false, "": false}},
		{"empty", map[string]any{}, map[string]bool{"vision": true, "": true}},
	} {
		q, err := ReadClusterQueue(queue(tc.selector))
		if (err != nil) != (tc.name != "empty") {
			t.Errorf("%s: the resource's error %v", tc.name, err)
		}
		if len(q.ResourceGroups) != 1 || q.Cohort != "research" || q.Preemption.WithinClusterQueue != "LowerPriority" {
			t.Errorf("%s: the queue is not read whole: %+v", tc.name, q)
		}
		for team, want := range tc.admits {
			labels := map[string]string{}
			if team != "" {
				labels["team"] = team
			}
			if got := q.AdmitsFrom(labels); got != want {
				t.Errorf("%s: admits from a namespace of team %q: %v, want %v", tc.name, team, got, want)
			}
		}
	}
}

func TestClusterQueueDefaultsAreWrittenOut(t *testing.T) {
	obj, err := ClusterQueueSpec{Name: "q", ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu"},
		Flavors: []FlavorQuotas{{Name: "f", Resources: []Quota{{Name: "cpu", Nominal: "1"}}}}}}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// An empty selector admits from every namespace; a missing one from none.
	if sel, ok, _ := unstructured.NestedMap(obj.Object, "spec", "namespaceSelector"); !ok || len(sel) != 0 {
		t.Errorf("namespaceSelector = %v (present %v), want {}", sel, ok)
	}
	if p, _, _ := unstructured.NestedString(obj.Object, "spec", "preemption", "withinClusterQueue"); p != "Never" {
		t.Errorf("withinClusterQueue = %q", p)
	}
}

func TestClusterQueueCheck(t *testing.T) {
	for name, tc := range map[string]struct {
		spec ClusterQueueSpec
		want string
	}{
		"missing quota": {ClusterQueueSpec{ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu", "memory"},
			Flavors: []FlavorQuotas{{Name: "f", Resources: []Quota{{Name: "cpu", Nominal: "1"}}}}}}}, "a quota for each covered resource"},
		"wrong order": {ClusterQueueSpec{ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu", "memory"},
			Flavors: []FlavorQuotas{{Name: "f", Resources: []Quota{{Name: "memory", Nominal: "1"}, {Name: "cpu", Nominal: "1"}}}}}}}, "in the order of covered_resources"},
		"borrowing without cohort": {ClusterQueueSpec{ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu"},
			Flavors: []FlavorQuotas{{Name: "f", Resources: []Quota{{Name: "cpu", Nominal: "1", BorrowingLimit: "1"}}}}}}}, "needs a cohort"},
		"negative": {ClusterQueueSpec{ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu"},
			Flavors: []FlavorQuotas{{Name: "f", Resources: []Quota{{Name: "cpu", Nominal: "-1"}}}}}}}, "must not be negative"},
		// Kueue v0.19.2's CEL rule on spec.preemption.
		"borrowing preemption without reclaim": {ClusterQueueSpec{Cohort: "c", Preemption: Preemption{ReclaimWithinCohort: "Never", BorrowWithinCohort: "LowerPriority"}},
			`borrow_within_cohort = "LowerPriority" needs reclaim_within_cohort other than "Never"`},
		// Its webhook: lending at most the nominal quota; a resource and a flavor in one group only.
		"lending more than it has": {ClusterQueueSpec{Cohort: "c", ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu"},
			Flavors: []FlavorQuotas{{Name: "f", Resources: []Quota{{Name: "cpu", Nominal: "2", LendingLimit: "3"}}}}}}}, "lending_limit 3 is more than nominal_quota 2"},
		"a resource in two groups": {ClusterQueueSpec{ResourceGroups: []ResourceGroup{
			{CoveredResources: []string{"cpu"}, Flavors: []FlavorQuotas{{Name: "a", Resources: []Quota{{Name: "cpu", Nominal: "1"}}}}},
			{CoveredResources: []string{"cpu"}, Flavors: []FlavorQuotas{{Name: "b", Resources: []Quota{{Name: "cpu", Nominal: "1"}}}}}}}, `"cpu" is covered by resource_group 0 too`},
		"a flavor in two groups": {ClusterQueueSpec{ResourceGroups: []ResourceGroup{
			{CoveredResources: []string{"cpu"}, Flavors: []FlavorQuotas{{Name: "a", Resources: []Quota{{Name: "cpu", Nominal: "1"}}}}},
			{CoveredResources: []string{"memory"}, Flavors: []FlavorQuotas{{Name: "a", Resources: []Quota{{Name: "memory", Nominal: "1"}}}}}}}, `flavor "a" is in resource_group 0 too`},
		"a resource name that is not one": {ClusterQueueSpec{ResourceGroups: []ResourceGroup{{CoveredResources: []string{"nvidia gpu"},
			Flavors: []FlavorQuotas{{Name: "f", Resources: []Quota{{Name: "nvidia gpu", Nominal: "1"}}}}}}}, "is not a resource name"},
		"too many groups": {ClusterQueueSpec{ResourceGroups: make([]ResourceGroup, 17)}, "Kueue takes at most 16"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.spec.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v, want %q", err, tc.want)
			}
		})
	}
}

// A ResourceFlavor Kueue v0.19.2 would refuse: more than 8 taints, two of one key and effect, a
// topology without node labels.
func TestFlavorCheck(t *testing.T) {
	taint := func(key string) corev1.Taint { return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule} }
	many := make([]corev1.Taint, 9)
	for i := range many {
		many[i] = taint(fmt.Sprintf("k%d", i))
	}
	for _, tc := range []struct {
		spec FlavorSpec
		want string
	}{
		{FlavorSpec{NodeTaints: many}, "9 node_taints"},
		{FlavorSpec{NodeTaints: []corev1.Taint{taint("gpu"), taint("gpu")}}, "unique by key and effect"},
		{FlavorSpec{Topology: "dc"}, `topology_name "dc" needs node_labels`},
	} {
		if err := tc.spec.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want %q", tc.spec, err, tc.want)
		}
		if _, err := tc.spec.Build(); err == nil {
			t.Errorf("Build(%+v) made a flavor Kueue refuses", tc.spec)
		}
	}
	if err := (FlavorSpec{NodeTaints: []corev1.Taint{taint("gpu"), {Key: "gpu", Effect: corev1.TaintEffectNoExecute}}}).Check(); err != nil {
		t.Errorf("one key with two effects: %v", err)
	}
}

func TestFlavorReadsBackAsWritten(t *testing.T) {
	spec := FlavorSpec{Name: "gpu", NodeLabels: map[string]string{"nvidia.com/gpu.present": "true"},
		NodeTaints:  []corev1.Taint{{Key: "gpu_node", Value: "invalid", Effect: corev1.TaintEffectNoSchedule}},
		Tolerations: []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}, Topology: "dc"}
	obj, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadFlavor(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("read back %+v, want %+v", back, spec)
	}
}

// Workloads as Kueue v0.19 writes them.
func TestReadWorkload(t *testing.T) {
	for name, tc := range map[string]struct {
		workload string
		admitted bool
		reason   string
	}{
		"admitted": {`
status:
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved}
  - {type: Admitted, status: "True", reason: Admitted}`, true, ""},
		"no quota": {`
status:
  conditions:
  - {type: QuotaReserved, status: "False", reason: Pending, message: "couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor gpu, 2 more needed"}`,
			false, "insufficient unused quota for nvidia.com/gpu in flavor gpu, 2 more needed"},
		"preempted": {`
status:
  conditions:
  - {type: Admitted, status: "False", reason: NoReservation}
  - {type: Evicted, status: "True", reason: Preempted, message: "Preempted to accommodate a workload (UID: x) due to reclamation within the cohort"}
  - {type: QuotaReserved, status: "False", reason: Pending, message: "couldn't assign flavors"}`,
			false, "evicted (Preempted): Preempted to accommodate a workload (UID: x) due to reclamation within the cohort; couldn't assign flavors"},
		"new":         {`status: {}`, false, "waiting for Kueue to consider it"},
		"deactivated": {"spec: {active: false}\nstatus: {}", false, "deactivated"},
	} {
		t.Run(name, func(t *testing.T) {
			a := ReadWorkload(decode(t, tc.workload))
			if a.Admitted != tc.admitted || !strings.Contains(a.Reason, tc.reason) {
				t.Errorf("ReadWorkload = %+v, want admitted %v and a reason with %q", a, tc.admitted, tc.reason)
			}
		})
	}
}

func TestReadQueueStatus(t *testing.T) {
	st := ReadQueueStatus(decode(t, `
status:
  pendingWorkloads: 1
  reservingWorkloads: 2
  admittedWorkloads: 2
  flavorsUsage:
  - name: gpu
    resources:
    - {name: nvidia.com/gpu, total: "2", borrowed: "0"}
    - {name: memory, total: 4Gi, borrowed: 1Gi}
  conditions:
  - {type: Active, status: "True", reason: Ready}`))
	want := QueueStatus{Pending: 1, Reserving: 2, Admitted: 2, Active: true,
		Usage: map[string]string{"gpu/nvidia.com/gpu": "2", "gpu/memory": "4Gi"}, Borrowed: map[string]string{"gpu/memory": "1Gi"}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("ReadQueueStatus = %+v, want %+v", st, want)
	}
}

// A Topology Kueue v0.19.2's CRD would refuse: no level, more than 16, a level twice, a level that
// is not a label name, the hostname level above another; one it takes reads back as written.
func TestTopologyCheckAndReadBack(t *testing.T) {
	many := make([]string, 17)
	for i := range many {
		many[i] = fmt.Sprintf("example.com/level-%d", i)
	}
	for _, tc := range []struct {
		levels []string
		want   string
	}{
		{nil, "0 levels; Kueue takes 1 to 16"},
		{many, "17 levels"},
		{[]string{"example.com/rack", "example.com/rack"}, "given twice"},
		{[]string{"not a label!"}, "is not a node label name"},
		{[]string{HostnameLevel, "example.com/rack"}, "only as the lowest (last) level"},
	} {
		spec := TopologySpec{Name: "dc", Levels: tc.levels}
		if _, err := spec.Build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build(%q) = %v, want %q", tc.levels, err, tc.want)
		}
	}
	spec := TopologySpec{Name: "dc", Levels: []string{"example.com/block", "example.com/rack", HostnameLevel}}
	obj, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadTopology(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("read back %+v, want %+v", back, spec)
	}
}

// A template is counted as Kueue counts it: the RuntimeClass's overhead where it has none, the
// LimitRange's default limits and requests where a container sets none (the first LimitRange
// that says one), and then limits standing for missing requests, in that order: a container with
// a CPU limit alone counts the LimitRange's default CPU request, not its limit.
func TestAPodSetIsCountedWithItsLimitRangeAndOverhead(t *testing.T) {
	q := resource.MustParse
	lr := func(def, req corev1.ResourceList) corev1.LimitRange {
		return corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: def, DefaultRequest: req}}}}
	}
	ranges := []corev1.LimitRange{
		lr(corev1.ResourceList{"memory": q("2Gi")}, corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")}),
		lr(corev1.ResourceList{"memory": q("8Gi")}, corev1.ResourceList{"cpu": q("3")}),
	}
	runtimeClass := "kata"
	spec := corev1.PodSpec{RuntimeClassName: &runtimeClass, Containers: []corev1.Container{
		{Name: "main", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("4"), "nvidia.com/gpu": q("1")}}},
		{Name: "sidecar"},
	}}
	got := PodSetOf("worker", 2, AdjustPodSpec(spec, ranges, corev1.ResourceList{"cpu": q("250m"), "memory": q("100Mi")})).Requests
	// main: cpu 1 (the default request, not its limit of 4), memory 1Gi, 1 GPU; sidecar: cpu 1,
	// memory 1Gi; overhead: cpu 250m, memory 100Mi.
	want := map[string]int64{"cpu": 2250, "memory": 2*(1<<30) + 100*(1<<20), "nvidia.com/gpu": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	if bare := PodSetOf("worker", 2, spec).Requests; bare["cpu"] != 4000 || bare["memory"] != 0 {
		t.Errorf("without a LimitRange or overhead the limits stand for the requests: %v", bare)
	}
}
