package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// kindExample is a job of one kind for the registry's test: its spec (suspended or not, for a
// kind that can be), its reader, its worker count, and the runtime its pods come from (for a kind
// whose pods are its runtime's).
type kindExample struct {
	spec    func(suspend bool) Spec
	read    func(*unstructured.Unstructured) (Spec, error)
	workers int32
	runtime func(t *testing.T) *unstructured.Unstructured
	// canSuspend: the kind's API has a suspend.
	canSuspend bool
}

// kindExamples has an example of every registered kind (TestEveryKindIsComplete fails, naming
// the kind, for one without).
var kindExamples = map[*Kind]kindExample{
	MPI: {
		spec: func(suspend bool) Spec {
			s := arenaSSDSpec()
			s.RunPolicy.QueueName, s.RunPolicy.Suspend = "", suspend
			withSensitiveEnvAndCheckpoint(&s.Pod)
			return s
		},
		read: func(obj *unstructured.Unstructured) (Spec, error) { return ReadMPIJob(obj) }, workers: 1, canSuspend: true,
	},
	TF: {
		spec: func(suspend bool) Spec {
			s := arenaTFSpec()
			s.RunPolicy.Suspend = suspend
			withSensitiveEnvAndCheckpoint(&s.Pod)
			return s
		},
		read: func(obj *unstructured.Unstructured) (Spec, error) { return ReadTFJob(obj) }, workers: 2, canSuspend: true,
	},
	PyTorch: {
		spec: func(suspend bool) Spec {
			s := arenaPyTorchSpec()
			s.RunPolicy.Suspend = suspend
			withSensitiveEnvAndCheckpoint(&s.Pod)
			return s
		},
		read: func(obj *unstructured.Unstructured) (Spec, error) { return ReadPyTorchJob(obj) }, workers: 2, canSuspend: true,
	},
	Elastic: {
		spec: func(bool) Spec {
			s := seedElasticSpec()
			withSensitiveEnvAndCheckpoint(&s.Pod)
			return s
		},
		read:    func(obj *unstructured.Unstructured) (Spec, error) { return ReadElasticJob(obj) },
		workers: 4,
	},
	Train: {
		spec: func(suspend bool) Spec {
			s := trainSpec()
			s.Suspend = suspend
			withSensitiveEnvAndCheckpoint(&s.Pod)
			return s
		},
		read: func(obj *unstructured.Unstructured) (Spec, error) { return ReadTrainJob(obj) }, workers: 2, canSuspend: true,
		runtime: func(t *testing.T) *unstructured.Unstructured {
			t.Helper()
			rt, err := NewRuntime(RuntimeSpec{Name: "torch", Framework: FrameworkTorch, Command: []string{"torchrun"}, Pod: PodOptions{Image: "pytorch:2"}})
			if err != nil {
				t.Fatal(err)
			}
			return rt
		},
	},
}

// withSensitiveEnvAndCheckpoint gives a job's pods a variable whose value is sensitive, and a
// checkpoint (whose variables CheckpointEnv are the checkpoint's, not the job's env, when read).
func withSensitiveEnvAndCheckpoint(o *PodOptions) {
	o.Env = merge(o.Env, map[string]string{sensitiveName: sensitiveValue})
	o.SensitiveEnv = []string{sensitiveName}
	o.Checkpoint = &exampleCheckpoint
}

var exampleCheckpoint = Checkpoint{Path: "s3://bucket/run", SaveSeconds: 30}

const sensitiveName, sensitiveValue = "API_TOKEN", "s3cr3t-value"

// Every registered kind does what the provider asks of a kind: its example builds an object of
// its API that reads back as the same job, its worker count is read from the object, its rescale
// patch (for a kind that rescales) changes exactly that count and is refused on a count someone
// else changed, its roles are the pods Build made with the counts the job expects, it says
// whether the object is suspended, and its status reads a new object as PENDING.
func TestEveryKindIsComplete(t *testing.T) {
	for _, k := range Kinds() {
		ex, ok := kindExamples[k]
		if !ok {
			t.Errorf("kind %s is registered but has no example in kindExamples (kind_test.go)", k.Name)
			continue
		}
		if err := k.check(); err != nil {
			t.Error(err)
		}
		spec := ex.spec(false)
		if spec.Kind() != k {
			t.Errorf("kind %s: its example's spec is of kind %s", k.Name, spec.Kind().Name)
		}
		obj, _, err := spec.Build()
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		if gv := obj.GroupVersionKind(); gv.GroupVersion() != k.GVR.GroupVersion() || gv.Kind != k.Object {
			t.Errorf("kind %s builds a %s, want %s %s", k.Name, gv, k.GVR.GroupVersion(), k.Object)
		}

		read, err := ex.read(obj)
		if err != nil {
			t.Fatalf("kind %s: reading its own object: %v", k.Name, err)
		}
		// Which variables are sensitive is read back from the object (an import keeps them so),
		// which names them without their values.
		if got := read.Pods().SensitiveEnv; !cmp.Equal(got, []string{sensitiveName}) {
			t.Errorf("kind %s: its sensitive variables read back as %v, want [%s]", k.Name, got, sensitiveName)
		}
		if a := obj.GetAnnotations(); a[SensitiveEnvAnnotation] != sensitiveName || strings.Contains(fmt.Sprint(a), sensitiveValue) {
			t.Errorf("kind %s: the job's annotations %v do not name exactly its sensitive variable", k.Name, a)
		}
		if _, ok := read.Pods().Annotations[SensitiveEnvAnnotation]; ok {
			t.Errorf("kind %s: the sensitive variables' names read back as the user's annotation", k.Name)
		}
		again, _, err := read.Build()
		if err != nil {
			t.Fatalf("kind %s: building what was read: %v", k.Name, err)
		}
		if diff := cmp.Diff(obj.Object, again.Object); diff != "" {
			t.Errorf("kind %s: the job read back builds another object (-built +read back):\n%s", k.Name, diff)
		}

		if gaps := k.Unexpressed(obj, again); len(gaps) > 0 {
			t.Errorf("kind %s: its own job holds what its resource cannot say: %v", k.Name, gaps)
		}
		if n, err := k.Workers(obj); err != nil || n != ex.workers {
			t.Errorf("kind %s: Workers = %d (%v), want %d", k.Name, n, err, ex.workers)
		}
		checkRescale(t, k, obj, ex.workers)

		var runtime *unstructured.Unstructured
		if ex.runtime != nil {
			runtime = ex.runtime(t)
		}
		roles, err := k.Roles(obj, runtime)
		if err != nil || len(roles) == 0 {
			t.Errorf("kind %s: Roles = %v, %v", k.Name, roles, err)
		}
		counts := map[string]int{}
		for _, r := range roles {
			counts[r.Role] = r.Count
		}
		for role, n := range spec.Expect() {
			if counts[role] != n {
				t.Errorf("kind %s: role %s has %d pods in Roles, the job expects %d (roles %v)", k.Name, role, counts[role], n, counts)
			}
		}

		if k.Suspended(obj) {
			t.Errorf("kind %s: a job not suspended reads as suspended", k.Name)
		}
		if ex.canSuspend {
			suspended, _, err := ex.spec(true).Build()
			if err != nil {
				t.Fatal(err)
			}
			if !k.Suspended(suspended) {
				t.Errorf("kind %s: a suspended job does not read as suspended", k.Name)
			}
		}

		if s, err := k.Status(Observed{Object: obj}, obj.GetCreationTimestamp().Time); err != nil || s.Phase != Pending {
			t.Errorf("kind %s: a new job's status is %q (%v), want %s", k.Name, s.Phase, err, Pending)
		}
		if _, err := labels.Parse(k.PodSelector(obj.GetName())); err != nil {
			t.Errorf("kind %s: its pod selector does not parse: %v", k.Name, err)
		}
	}
}

// checkRescale applies the kind's rescale patch to obj as the API server would: it changes the
// worker count, and it is refused when the count is no longer the one it was made from.
func checkRescale(t *testing.T, k *Kind, obj *unstructured.Unstructured, workers int32) {
	t.Helper()
	if !k.Rescalable() {
		if k.RescalePatch(workers, workers+1) != nil {
			t.Errorf("kind %s cannot rescale but has a rescale patch", k.Name)
		}
		return
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(from, to int32) (*unstructured.Unstructured, error) {
		patch, err := jsonpatch.DecodePatch(k.RescalePatch(from, to))
		if err != nil {
			return nil, err
		}
		out, err := patch.Apply(doc)
		if err != nil {
			return nil, err
		}
		patched := &unstructured.Unstructured{}
		return patched, patched.UnmarshalJSON(out)
	}
	patched, err := apply(workers, workers+1)
	if err != nil {
		t.Fatalf("kind %s: its rescale patch does not apply: %v", k.Name, err)
	}
	if n, err := k.Workers(patched); err != nil || n != workers+1 {
		t.Errorf("kind %s: after its rescale patch Workers = %d (%v), want %d", k.Name, n, err, workers+1)
	}
	if _, err := apply(workers+5, workers+1); err == nil {
		t.Errorf("kind %s: its rescale patch applies on a worker count it was not made from", k.Name)
	}
}

// A kind registered without one of the capabilities every kind needs is refused, and the error
// names it.
func TestRegisterNamesWhatAKindLacks(t *testing.T) {
	for name, remove := range map[string]func(*Kind){
		"Name":          func(k *Kind) { k.Name = "" },
		"Object":        func(k *Kind) { k.Object = "" },
		"GVR":           func(k *Kind) { k.GVR.Resource = "" },
		"RoleLabel":     func(k *Kind) { k.RoleLabel = "" },
		"Operator":      func(k *Kind) { k.Operator = "" },
		"podSelector":   func(k *Kind) { k.podSelector = nil },
		"status":        func(k *Kind) { k.status = nil },
		"failure":       func(k *Kind) { k.failure = nil },
		"workers":       func(k *Kind) { k.workers = nil },
		"priorityClass": func(k *Kind) { k.priorityClass = nil },
		"roles":         func(k *Kind) { k.roles = nil },
		"suspended":     func(k *Kind) { k.suspended = nil },
	} {
		for _, registered := range Kinds() {
			k := *registered
			remove(&k)
			err := k.check()
			if err == nil || !strings.Contains(err.Error(), " "+name) {
				t.Errorf("kind %s without %s: check() = %v, want an error naming %s", registered.Name, name, err, name)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("kind %s without %s was registered", registered.Name, name)
					}
				}()
				register(&k)
			}()
		}
	}
}

// A Service under a dependent's name is the job's when it selects exactly the job's pods of the
// dependent's role, and not when it selects more, other pods, or another role's.
func TestMadeForTakesOnlyAServiceSelectingExactlyTheRole(t *testing.T) {
	etcd := Elastic.Dependents("pet")[0]
	service := func(name string, selector map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"selector": selector}}}
	}
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want bool
	}{
		{service("pet-etcd", map[string]any{FrameworkNameLabel: "pet", TaskRoleLabel: "etcd"}), true},
		{service("pet-etcd", map[string]any{FrameworkNameLabel: "pet", TaskRoleLabel: "worker"}), false},
		{service("pet-etcd", map[string]any{FrameworkNameLabel: "pet"}), false},
		{service("pet-etcd", map[string]any{FrameworkNameLabel: "pet", TaskRoleLabel: "etcd", "app": "x"}), false},
		{service("pet-etcd", map[string]any{FrameworkNameLabel: "other", TaskRoleLabel: "etcd"}), false},
		{service("pet-etcd", nil), false},
	} {
		if got := Elastic.MadeFor("pet", etcd, tc.obj); got != tc.want {
			sel, _, _ := unstructured.NestedMap(tc.obj.Object, "spec", "selector")
			t.Errorf("Service selecting %v: MadeFor %v, want %v", sel, got, tc.want)
		}
	}
	if policy := Elastic.Dependents("pet")[2]; Elastic.MadeFor("pet", policy, service("pet-etcd", nil)) {
		t.Error("a NetworkPolicy dependent is taken by its name alone")
	}
}

// Roles reads each kind's pod templates as Build makes them.
func TestRoles(t *testing.T) {
	obj, _, err := MPIJobSpec{Name: "j", Namespace: "default", Workers: 3, LauncherCommand: []string{"mpirun", "x"},
		Pod: PodOptions{Image: "i", GPUs: 2}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	roles, err := MPI.Roles(obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 2 || roles[0].Role != "launcher" || roles[0].Count != 1 || roles[1].Role != "worker" || roles[1].Count != 3 {
		t.Fatalf("roles %+v", roles)
	}
	if q := kueue.PodRequests(roles[1].Template.Spec)["nvidia.com/gpu"]; q.Value() != 2 {
		t.Errorf("a worker asks for %s GPUs", q.String())
	}
}

// A job as a wait's informer keeps it (DropPodTemplates) reads as the whole job: whether it runs
// as expected and its status are the same, running or pending, and no role keeps a template.
func TestAJobWithoutItsPodTemplatesReadsAsTheWholeJob(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	running := map[string]any{
		"conditions": []any{map[string]any{"type": "Running", "status": "True"}},
		"startTime":  "2026-11-25T10:00:00Z", "state": "AttemptRunning",
		"attemptStatus": map[string]any{"taskRoleStatuses": []any{map[string]any{"name": "worker", "taskStatuses": []any{
			map[string]any{"index": int64(0), "state": "TaskAttemptRunning", "attemptStatus": map[string]any{"podName": "w-0"}}}}}},
	}
	for _, k := range Kinds() {
		obj, _, err := kindExamples[k].spec(false).Build()
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		for what, status := range map[string]map[string]any{"pending": nil, "running": running} {
			whole := obj.DeepCopy()
			if status != nil {
				whole.Object["status"] = runtime.DeepCopyJSONValue(status)
			}
			slim := whole.DeepCopy()
			k.DropPodTemplates(slim)
			if k.templates != nil {
				for role, tmpl := range k.templates(slim) {
					if len(tmpl) > 0 {
						t.Errorf("kind %s: role %s keeps its template", k.Name, role)
					}
				}
			}
			expect := map[string]int{"worker": 1}
			wantRuns, _, wantErr := k.Running(Observed{Object: whole}, RunningWait{Expect: expect}, now)
			gotRuns, _, gotErr := k.Running(Observed{Object: slim}, RunningWait{Expect: expect}, now)
			if wantRuns != gotRuns || fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("kind %s, %s: runs %v (%v) without its templates, %v (%v) with them", k.Name, what, gotRuns, gotErr, wantRuns, wantErr)
			}
			want, err := k.Status(Observed{Object: whole}, now)
			if err != nil {
				t.Fatalf("kind %s, %s: %v", k.Name, what, err)
			}
			got, err := k.Status(Observed{Object: slim}, now)
			if err != nil {
				t.Fatalf("kind %s, %s: %v", k.Name, what, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kind %s, %s: the status without its templates (-whole +slim):\n%s", k.Name, what, diff)
			}
		}
	}
}

// A job's PriorityClass is the one Kueue v0.19.2 gives its Workload: the scheduling policy's,
// else the first replica type's, in Kueue's order of the kind's types, whose pods name one (an
// MPIJob's launcher before its workers, a PyTorchJob's master before its workers, a TFJob's
// chief first).
func TestPriorityClassIsTheOneKueueReads(t *testing.T) {
	class := func(o *PodOptions, role, name string) {
		o.Roles = map[string]RoleOptions{role: {PriorityClassName: name}}
	}
	mpi := arenaSSDSpec()
	mpi.Pod.PriorityClassName = "workers"
	class(&mpi.Pod, "launcher", "launcher")
	tf := arenaTFSpec()
	tf.Pod.PriorityClassName = "workers"
	class(&tf.Pod, "chief", "chief")
	pytorch := arenaPyTorchSpec()
	pytorch.Pod.PriorityClassName = "workers"
	class(&pytorch.Pod, "master", "master")
	policy := arenaPyTorchSpec()
	policy.Pod.PriorityClassName = "workers"
	policy.RunPolicy.Scheduling = &SchedulingPolicy{PriorityClass: "policy"}
	for _, tc := range []struct {
		spec Spec
		want string
	}{{mpi, "launcher"}, {tf, "chief"}, {pytorch, "master"}, {policy, "policy"}} {
		obj, _, err := tc.spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.spec.Kind().PriorityClass(obj); got != tc.want {
			t.Errorf("%s: PriorityClass %q, want %q (Kueue's)", tc.spec.Kind().Object, got, tc.want)
		}
	}
}
