package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// seedElasticSpec is the seed example's inputs: job pet, 4 workers in 1:4, one GPU and one
// process each, the ImageNet script and its arguments.
func seedElasticSpec() ElasticJobSpec {
	return ElasticJobSpec{
		Name:                       "pet",
		Namespace:                  "default",
		Launcher:                   LauncherTorchelastic,
		Script:                     "/workspace/examples/imagenet/main.py",
		ScriptArgs:                 []string{"--arch=resnet18", "--batch-size=32", "--epochs=2", "/workspace/data/tiny-imagenet-200"},
		Workers:                    4,
		MinWorkers:                 1,
		MaxWorkers:                 4,
		ProcsPerNode:               1,
		MaxRetryCount:              DefaultMaxRetryCount,
		PodGracefulDeletionTimeout: DefaultPodGracefulDeletionTimeout,
		// The seed's etcd (its role's image); the provider's default is a maintained 3.5.
		Pod: PodOptions{Image: "torchelastic/examples:0.2.0", GPUs: 1, Roles: map[string]RoleOptions{EtcdRole: {Image: "quay.io/coreos/etcd:v3.4.9"}}},
	}
}

// comparableObject strips what this provider adds on purpose (namespace, its managed-by label) and
// decodes into typed objects, so the comparison is field for field, not text.
func comparableObject(t *testing.T, obj map[string]any) any {
	t.Helper()
	u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	u.SetNamespace("")
	labels := u.GetLabels()
	delete(labels, ManagedByLabel)
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	delete(annotations, ElasticInputsAnnotation)
	u.SetAnnotations(annotations)
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var typed any
	switch u.GetKind() {
	case "Framework":
		typed = &framework{}
	case "Service":
		typed = &corev1.Service{}
	default:
		t.Fatalf("unexpected kind %q", u.GetKind())
	}
	if err := json.Unmarshal(data, typed); err != nil {
		t.Fatal(err)
	}
	// The etcd requests no GPU, so it is told to see none (TestElasticJobGPUVisibility).
	if f, ok := typed.(*framework); ok {
		for _, r := range f.Spec.TaskRoles {
			for i := range r.Task.Pod.Spec.Containers {
				c := &r.Task.Pod.Spec.Containers[i]
				c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == NvidiaVisibleDevices })
			}
		}
	}
	return typed
}

// departFromSeed makes in the seed's Framework the changes the provider makes on purpose, which
// a real node showed are needed: the etcd runs without a shell (etcd's images have none since
// 3.5.7), and the workers wait for the etcd to answer (python-etcd does not retry) and restart
// their processes after a scale-down (--max_restarts); and every container leaves its last lines
// in its status when it exits with an error, which a failed wait quotes.
func departFromSeed(t *testing.T, f *framework) {
	t.Helper()
	for _, r := range f.Spec.TaskRoles {
		c := &r.Task.Pod.Spec.Containers[0]
		c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		if len(c.Command) != 3 || c.Command[0] != "sh" {
			t.Fatalf("the seed's %s command is not sh -c: %q", r.Name, c.Command)
		}
		switch r.Name {
		case EtcdRole:
			c.Command = strings.Fields(c.Command[2])
		case WorkerRole:
			wait := "until $(command -v python3 || command -v python) -c \"import socket; socket.create_connection(('${FC_FRAMEWORK_NAME}-etcd', 2379), 2)\" 2>/dev/null; do sleep 1; done; "
			c.Command[2] = wait + strings.Replace(strings.Join(strings.Fields(c.Command[2]), " "), " --nproc_per_node=1 ", " --nproc_per_node=1 --max_restarts=100 ", 1)
		}
	}
}

// seedObjects are the seed example's etcd Service, workers' Service and Framework, as written.
func seedObjects(t *testing.T) []map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/seed-pytorch-elastic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var seed []map[string]any
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		seed = append(seed, obj)
	}
	if len(seed) != 3 {
		t.Fatalf("the seed has %d objects, want 3", len(seed))
	}
	return seed
}

func TestNewElasticJobMatchesSeed(t *testing.T) {
	seed := seedObjects(t)
	fw, services, err := seedElasticSpec().Build()
	if err != nil {
		t.Fatal(err)
	}
	etcdSvc, workerSvc := services[0], services[1]
	for i, got := range []*unstructured.Unstructured{etcdSvc, workerSvc, fw} {
		want := comparableObject(t, seed[i])
		if f, ok := want.(*framework); ok {
			departFromSeed(t, f)
		}
		if diff := cmp.Diff(want, comparableObject(t, got.Object), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s %s differs from the seed (-seed +built):\n%s", got.GetKind(), got.GetName(), diff)
		}
	}
	if got := fw.GetLabels()[ManagedByLabel]; got != ManagedByValue {
		t.Errorf("Framework is not labelled as this provider's: %q", got)
	}
}

// etcdWait is how a worker's command waits for the job's etcd to answer.
const etcdWait = `until $(command -v python3 || command -v python) -c "import socket; socket.create_connection(('${FC_FRAMEWORK_NAME}-etcd', 2379), 2)" 2>/dev/null; do sleep 1; done; `

func TestElasticCustomCommandAndQuoting(t *testing.T) {
	spec := seedElasticSpec()
	spec.ScriptArgs = []string{"--name", "it's mine"}
	got := spec.workerCommand()[2]
	want := etcdWait + `python -m torchelastic.distributed.launch --rdzv_backend=etcd --rdzv_endpoint=${FC_FRAMEWORK_NAME}-etcd:2379 --rdzv_id=${FC_FRAMEWORK_NAME} --nnodes=1:4 --nproc_per_node=1 --max_restarts=100 /workspace/examples/imagenet/main.py --name 'it'"'"'s mine'`
	if got != want {
		t.Errorf("worker command\n got %s\nwant %s", got, want)
	}
	spec.Command = []string{"torchrun", "train.py"}
	if diff := cmp.Diff(spec.Command, spec.workerCommand()); diff != "" {
		t.Errorf("custom command not used as is:\n%s", diff)
	}
}

// torchrun is the default launcher: the same etcd rendezvous and bounds as the seed's
// torchelastic launcher, with PyTorch's current etcd backend.
func TestElasticTorchrunCommand(t *testing.T) {
	spec := seedElasticSpec()
	spec.Launcher = ""
	fw, _, _, err := NewElasticJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadElasticJob(fw)
	if err != nil || read.Launcher != LauncherTorchrun {
		t.Fatalf("default launcher read back as %q (%v)", read.Launcher, err)
	}
	want := etcdWait + `torchrun --rdzv_backend=etcd-v2 --rdzv_endpoint=${FC_FRAMEWORK_NAME}-etcd:2379 --rdzv_id=${FC_FRAMEWORK_NAME} --nnodes=1:4 --nproc_per_node=1 --max_restarts=100 /workspace/examples/imagenet/main.py --arch=resnet18 --batch-size=32 --epochs=2 /workspace/data/tiny-imagenet-200`
	if got := read.workerCommand()[2]; got != want {
		t.Errorf("worker command\n got %s\nwant %s", got, want)
	}
	// A Framework made before the launcher was a choice ran torchelastic's.
	annotations := fw.GetAnnotations()
	annotations[ElasticInputsAnnotation] = strings.Replace(annotations[ElasticInputsAnnotation], `"launcher":"torchrun",`, "", 1)
	fw.SetAnnotations(annotations)
	if old, err := ReadElasticJob(fw); err != nil || old.Launcher != LauncherTorchelastic {
		t.Errorf("old Framework read as launcher %q (%v)", old.Launcher, err)
	}
}

// The etcd requests no GPU and is told to see none; the workers see what they requested.
func TestElasticJobGPUVisibility(t *testing.T) {
	for gpus, worker := range map[int64]string{0: NoGPUs, 1: ""} {
		spec := seedElasticSpec()
		spec.Pod.GPUs = gpus
		fw, _, _, err := NewElasticJob(spec)
		if err != nil {
			t.Fatal(err)
		}
		var f framework
		if err := fromUnstructured(fw, &f); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range f.Spec.TaskRoles {
			got[r.Name] = visibleDevices(r.Task.Pod.Spec.Containers[0].Env)
		}
		if want := map[string]string{EtcdRole: NoGPUs, WorkerRole: worker}; !cmp.Equal(want, got) {
			t.Errorf("%d GPUs: %s per role %v, want %v", gpus, NvidiaVisibleDevices, got, want)
		}
	}
}

// The elastic job runs when the Framework and each task run, and the etcd and exactly the
// workers' pods run: both views, so a removed worker still being deleted keeps the wait going.
func TestElasticRunning(t *testing.T) {
	task := func(i int64, state string) any {
		return map[string]any{"index": i, "state": state, "attemptStatus": map[string]any{"podName": fmt.Sprint("p", i)}}
	}
	framework := func(state string, workers ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"state": state, "attemptStatus": map[string]any{
			"taskRoleStatuses": []any{
				map[string]any{"name": EtcdRole, "taskStatuses": []any{task(0, "AttemptRunning")}},
				map[string]any{"name": WorkerRole, "taskStatuses": workers},
			}}}}}
	}
	pod := func(role string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{TaskRoleLabel: role}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	pods := []corev1.Pod{pod(EtcdRole), pod(WorkerRole), pod(WorkerRole)}
	expect := map[string]int{EtcdRole: 1, WorkerRole: 2}
	for _, c := range []struct {
		name string
		o    Observed
		done bool
	}{
		{"every task and pod running", Observed{Object: framework("AttemptRunning", task(0, "AttemptRunning"), task(1, "AttemptRunning")), Pods: pods}, true},
		{"a task still being created", Observed{Object: framework("AttemptRunning", task(0, "AttemptRunning"), task(1, "AttemptCreationPending")), Pods: pods}, false},
		{"a removed worker's pod still there", Observed{Object: framework("AttemptRunning", task(0, "AttemptRunning"), task(1, "AttemptRunning")), Pods: append(pods, pod(WorkerRole))}, false},
		{"a worker pod short", Observed{Object: framework("AttemptRunning", task(0, "AttemptRunning"), task(1, "AttemptRunning")), Pods: pods[:2]}, false},
	} {
		if done, _, err := Elastic.Running(c.o, RunningWait{Expect: expect}, time.Now()); err != nil || done != c.done {
			t.Errorf("%s: done=%v err=%v, want %v", c.name, done, err, c.done)
		}
	}
	failed := framework("Completed")
	_ = unstructured.SetNestedField(failed.Object, map[string]any{"type": map[string]any{"name": "Failed"}, "diagnostics": "exit 1"},
		"status", "attemptStatus", "completionStatus")
	if _, _, err := Elastic.Running(Observed{Object: failed}, RunningWait{Expect: expect}, time.Now()); err == nil || !strings.Contains(err.Error(), "exit 1") {
		t.Errorf("a failed Framework ends the wait with its diagnostics: %v", err)
	}
}

// The rendezvous etcd is a CPU helper: it takes the job's priority (the training cannot outlive
// it, so it must not be preempted before its workers) but not the GPU nodes the job's node
// selector and tolerations lead to; roles.etcd gives it a placement and a priority of its own,
// read back as such.
func TestTheEtcdIsACPUHelperWithThePlacementItIsGiven(t *testing.T) {
	spec := seedElasticSpec()
	spec.Pod.Roles = nil // the default etcd image
	spec.Pod.NodeSelector = map[string]string{"nvidia.com/gpu.present": "true"}
	spec.Pod.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	spec.Pod.PriorityClassName = "training-high"
	build := func(spec ElasticJobSpec) (*unstructured.Unstructured, corev1.PodSpec) {
		t.Helper()
		fw, _, err := spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		var f framework
		if err := fromUnstructured(fw, &f); err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Spec.TaskRoles {
			if r.Name == EtcdRole {
				return fw, r.Task.Pod.Spec
			}
		}
		t.Fatal("no etcd task role")
		return nil, corev1.PodSpec{}
	}
	bare, p := build(spec)
	if p.NodeSelector != nil || p.Tolerations != nil || p.PriorityClassName != "training-high" {
		t.Errorf("the etcd's placement is the job's (node selector %v, tolerations %v) or its priority is not (%q)", p.NodeSelector, p.Tolerations, p.PriorityClassName)
	}
	own := RoleOptions{NodeSelector: map[string]string{"pool": "cpu"}, Tolerations: []corev1.Toleration{{Key: "pool", Value: "cpu", Effect: corev1.TaintEffectNoSchedule}},
		PriorityClassName: "system-cluster-critical"}
	spec.Pod.Roles = map[string]RoleOptions{EtcdRole: own}
	live, p := build(spec)
	if !cmp.Equal(p.NodeSelector, own.NodeSelector) || !cmp.Equal(p.Tolerations, own.Tolerations) || p.PriorityClassName != own.PriorityClassName {
		t.Errorf("the etcd's roles setting is not its placement and priority: %v %v %q", p.NodeSelector, p.Tolerations, p.PriorityClassName)
	}
	if diff := cmp.Diff(own, Elastic.ReadRoleOptions(live, bare, true)[EtcdRole]); diff != "" {
		t.Errorf("the etcd's roles setting reads back otherwise (-given +read):\n%s", diff)
	}
}

// An elastic job's count and bounds follow the rule every elastic job's do (CheckWorkerBounds),
// saying which side breaks it.
func TestElasticJobBoundsAreEveryElasticJobsRule(t *testing.T) {
	for _, c := range []struct {
		workers, lo, hi int32
		inverted        bool
	}{{5, 1, 4, false}, {1, 2, 4, false}, {3, 5, 4, true}} {
		spec := seedElasticSpec()
		spec.Workers, spec.MinWorkers, spec.MaxWorkers = c.workers, c.lo, c.hi
		_, _, err := spec.Build()
		var broken *BoundsError
		if !errors.As(err, &broken) || broken.Inverted() != c.inverted {
			t.Errorf("%d workers within %d..%d: %v, want a bounds error (inverted: %v)", c.workers, c.lo, c.hi, err, c.inverted)
		}
	}
}
