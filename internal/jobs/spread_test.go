package jobs

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// withPod is spec with its pod options changed by set.
func withPod(spec Spec, set func(*PodOptions)) Spec {
	v := reflect.New(reflect.TypeOf(spec)).Elem()
	v.Set(reflect.ValueOf(spec))
	o, _ := v.FieldByName("Pod").Interface().(PodOptions)
	set(&o)
	v.FieldByName("Pod").Set(reflect.ValueOf(o))
	out, _ := v.Interface().(Spec)
	return out
}

func productionPodFields(o *PodOptions) {
	o.SchedulerName, o.HostNetwork, o.HostIPC, o.TerminationGracePeriod = "volcano", true, true, ptr.To[int64](120)
	o.CPU, o.NoCPULimit = "4", true
	o.Spread = []Spread{{TopologyKey: "example.com/rack", MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule}}
}

// Every kind with templates of its own puts the pod fields on each role's pods, spreads each
// role over its own pods only (the selector is the kind's pod selector and the role's label,
// which is what its operator labels that role's pods with), sets the CPU as a request alone, and
// reads all of it back as the same job; a TrainJob, whose pods are its runtime's, refuses them.
func TestEveryKindPutsThePodFieldsOnItsRolesAndSpreadsEachRoleOverItsOwnPods(t *testing.T) {
	for _, k := range Kinds() {
		ex := kindExamples[k]
		spec := withPod(ex.spec(false), productionPodFields)
		obj, _, err := spec.Build()
		if k.templates == nil {
			if err == nil || !strings.Contains(err.Error(), "runtime") {
				t.Errorf("kind %s: its pods are its runtime's, yet it takes pod fields its runtime patch cannot carry: %v", k.Name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		job, err := labels.ConvertSelectorToLabelsMap(k.podSelector(obj.GetName()))
		if err != nil {
			t.Fatal(err)
		}
		for role := range k.templates(obj) {
			tmpl := templateOf(t, k, obj, role)
			c := tmpl.Spec.TopologySpreadConstraints
			if len(c) != 1 || c[0].TopologyKey != "example.com/rack" || c[0].LabelSelector == nil {
				t.Errorf("kind %s role %s: spread constraints %+v", k.Name, role, c)
				continue
			}
			selector := c[0].LabelSelector.MatchLabels
			if selector[k.RoleLabel] != role || !labels.SelectorFromSet(job).Matches(labels.Set(selector)) || len(selector) != len(job)+1 {
				t.Errorf("kind %s role %s: the spread selects %v, not this job's (%v) pods of this role", k.Name, role, selector, job)
			}
			if k == Elastic && role == EtcdRole {
				continue // its companion: the job's pod fields are the workers'
			}
			s := tmpl.Spec
			if s.SchedulerName != "volcano" || !s.HostNetwork || s.DNSPolicy != corev1.DNSClusterFirstWithHostNet || !s.HostIPC || ptr.Deref(s.TerminationGracePeriodSeconds, 0) != 120 {
				t.Errorf("kind %s role %s: pod fields not set: scheduler %q hostNetwork %v dns %q hostIPC %v grace %v", k.Name, role,
					s.SchedulerName, s.HostNetwork, s.DNSPolicy, s.HostIPC, s.TerminationGracePeriodSeconds)
			}
		}
		worker := templateOf(t, k, obj, WorkerRole).Spec.Containers[0].Resources
		if _, limited := worker.Limits[corev1.ResourceCPU]; limited || worker.Requests.Cpu().String() != "4" {
			t.Errorf("kind %s: the workers' CPU is not a request alone: %+v", k.Name, worker)
		}
		read, err := ex.read(obj)
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		rebuilt, _, err := read.Build()
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		if patches := k.ReadPodPatches(obj, rebuilt, nil); len(patches) > 0 {
			t.Errorf("kind %s: the fields do not read back as the same job; left for the pod patch: %v", k.Name, patches)
		}
		if got := read.Pods(); !got.NoCPULimit || got.SchedulerName != "volcano" || len(got.Spread) != 1 {
			t.Errorf("kind %s: read back as %+v", k.Name, got)
		}
	}
}

func TestSpreadIsRefusedWhereTheAPIServerWouldRefuseIt(t *testing.T) {
	for _, tc := range []struct {
		spread []Spread
		want   string
	}{
		{[]Spread{{TopologyKey: "bad key!", MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule}}, "not a label key"},
		{[]Spread{{TopologyKey: "zone", MaxSkew: 0, WhenUnsatisfiable: corev1.DoNotSchedule}}, "max_skew must be at least 1"},
		{[]Spread{{TopologyKey: "zone", MaxSkew: 1, WhenUnsatisfiable: "Never"}}, "when_unsatisfiable"},
		{[]Spread{{TopologyKey: "zone", MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule},
			{TopologyKey: "zone", MaxSkew: 2, WhenUnsatisfiable: corev1.DoNotSchedule}}, "given twice"},
	} {
		if err := validateSpread(tc.spread); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spread, err, tc.want)
		}
	}
	ok := []Spread{{TopologyKey: "zone", MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule}, {TopologyKey: "zone", MaxSkew: 1, WhenUnsatisfiable: corev1.ScheduleAnyway}}
	if err := validateSpread(ok); err != nil {
		t.Errorf("one key with both actions is valid: %v", err)
	}
}

// A runtime cannot know the TrainJob its pods will be of: its spread selects the replicated
// job's pods and takes the job from each pod's own JobSet label.
func TestARuntimeSpreadsEachReplicatedJobOverItsOwnJobsPods(t *testing.T) {
	rt, err := NewRuntime(RuntimeSpec{Name: "torch", Framework: FrameworkTorch, Command: []string{"torchrun"},
		Pod: PodOptions{Image: "pytorch:2", Spread: []Spread{{TopologyKey: "example.com/rack", MaxSkew: 1, WhenUnsatisfiable: corev1.ScheduleAnyway}}}})
	if err != nil {
		t.Fatal(err)
	}
	var tmpl corev1.PodTemplateSpec
	if err := fromMap(runtimeTemplates(rt)[TrainerNode], &tmpl); err != nil {
		t.Fatal(err)
	}
	c := tmpl.Spec.TopologySpreadConstraints
	if len(c) != 1 || c[0].LabelSelector.MatchLabels[ReplicatedJobLabel] != TrainerNode || !reflect.DeepEqual(c[0].MatchLabelKeys, []string{JobSetNameLabel}) {
		t.Errorf("the runtime's spread is %+v", c)
	}
}

// A spread constraint of another selector (written in a pod patch, or by hand) is not
// topology_spread: the read leaves it to the pod patch, which makes it again.
func TestASpreadOfAnotherSelectorIsReadAsThePodPatchNotAsTopologySpread(t *testing.T) {
	spec := arenaSSDSpec()
	spec.Pod.Patches = map[string]string{WorkerRole: `{"spec":{"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"kubernetes.io/hostname",` +
		`"whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"training.kubeflow.org/job-role":"worker"}}}]}}`}
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadMPIJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Pod.Spread) > 0 {
		t.Errorf("read as topology_spread: %+v", read.Pod.Spread)
	}
	read.Pod.Patches = nil
	bare, _, err := read.Build()
	if err != nil {
		t.Fatal(err)
	}
	if patches := MPI.ReadPodPatches(obj, bare, nil); !strings.Contains(patches[WorkerRole], "topologySpreadConstraints") {
		t.Errorf("the worker's constraint is not read as its pod patch: %v", patches)
	}
}
