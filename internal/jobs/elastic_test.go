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
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// seedElasticSpec is the seed example's inputs: job pet, 4 workers in 1:4, one GPU and one
// process each, the ImageNet script and its arguments.
func seedElasticSpec() ElasticJobSpec {
	return ElasticJobSpec{
		Name:                       "pet",
		Namespace:                  "default",
		Pod:                        PodOptions{Image: "torchelastic/examples:0.2.0", GPUs: 1},
		Launcher:                   LauncherTorchelastic,
		Script:                     "/workspace/examples/imagenet/main.py",
		ScriptArgs:                 []string{"--arch=resnet18", "--batch-size=32", "--epochs=2", "/workspace/data/tiny-imagenet-200"},
		Workers:                    4,
		MinWorkers:                 1,
		MaxWorkers:                 4,
		ProcsPerNode:               1,
		MaxRetryCount:              DefaultMaxRetryCount,
		PodGracefulDeletionTimeout: DefaultPodGracefulDeletionTimeout,
		// The seed's etcd; the provider's default is a maintained 3.5.
		EtcdImage: "quay.io/coreos/etcd:v3.4.9",
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
// their processes after a scale-down (--max_restarts).
func departFromSeed(t *testing.T, f *framework) {
	t.Helper()
	for _, r := range f.Spec.TaskRoles {
		c := &r.Task.Pod.Spec.Containers[0]
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
	fw, etcdSvc, workerSvc, err := NewElasticJob(seedElasticSpec())
	if err != nil {
		t.Fatal(err)
	}
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

// The seed's Framework written by hand (no record of this provider's inputs) reads as a job the
// schema can say: the workers' command as it is, the bounds and processes from the launcher's
// flags inside its sh -c line, the rest from the pods; rebuilt, it differs from what runs only
// in the etcd's command, which the schema cannot say.
func TestReadElasticJobMadeByHandFromTheSeed(t *testing.T) {
	seed := seedObjects(t)
	live := &unstructured.Unstructured{Object: seed[2]}
	live.SetNamespace("default")
	got, err := ReadElasticJob(live)
	if err != nil {
		t.Fatal(err)
	}
	var f framework
	if err := fromUnstructured(live, &f); err != nil {
		t.Fatal(err)
	}
	command := f.Spec.TaskRoles[1].Task.Pod.Spec.Containers[0].Command
	want := ElasticJobSpec{Name: "pet", Namespace: "default", Pod: PodOptions{Image: "torchelastic/examples:0.2.0", GPUs: 1, GPUResource: "nvidia.com/gpu"},
		Command: command, Workers: 4, MinWorkers: 1, MaxWorkers: 4, ProcsPerNode: 1, MaxRetryCount: 2, PodGracefulDeletionTimeout: 1800,
		EtcdImage: "quay.io/coreos/etcd:v3.4.9"}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("read (-want +got):\n%s", diff)
	}
	rebuilt, services, err := got.Build()
	if err != nil {
		t.Fatal(err)
	}
	if gaps := Elastic.Unexpressed(live, rebuilt); !slices.Equal(gaps, []string{"etcd: containers[etcd].command"}) {
		t.Errorf("what the schema cannot say: %q, want only the etcd's command", gaps)
	}
	for i, svc := range services {
		d, err := Elastic.DependentOf(svc)
		if err != nil {
			t.Fatal(err)
		}
		if !Elastic.MadeFor("pet", d, &unstructured.Unstructured{Object: seed[i]}) {
			t.Errorf("the seed's Service %s is not read as the job's %s", d.Name, d)
		}
	}
}

// A hand-made job's bounds come from --nnodes in either form, a fixed --nnodes fixes them, and a
// command without it bounds the workers to their count; torchrun's --nproc-per-node spelling is
// read too; a worker without a command cannot be said at all.
func TestReadElasticJobMadeByHandBoundsFromTheLauncherFlags(t *testing.T) {
	for _, tc := range []struct {
		command             []string
		args                []string
		min, max, processes int32
	}{
		{command: []string{"torchrun", "--nnodes", "2:8", "--nproc-per-node", "4", "train.py"}, min: 2, max: 8, processes: 4},
		{command: []string{"torchrun"}, args: []string{"--nnodes=3", "train.py"}, min: 3, max: 3, processes: 1},
		{command: []string{"python", "train.py", "--nnodes_hint=9"}, min: 4, max: 4, processes: 1},
	} {
		spec := seedElasticSpec()
		spec.Command, spec.Script, spec.ScriptArgs = tc.command, "", nil
		obj, _, err := spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		handMade(t, obj, tc.args)
		got, err := ReadElasticJob(obj)
		if err != nil {
			t.Fatal(err)
		}
		if want := append(slices.Clone(tc.command), tc.args...); !slices.Equal(got.Command, want) {
			t.Errorf("%q %q: command %q, want %q", tc.command, tc.args, got.Command, want)
		}
		if got.MinWorkers != tc.min || got.MaxWorkers != tc.max || got.ProcsPerNode != tc.processes {
			t.Errorf("%q %q: bounds %d:%d, %d processes; want %d:%d, %d", tc.command, tc.args, got.MinWorkers, got.MaxWorkers, got.ProcsPerNode,
				tc.min, tc.max, tc.processes)
		}
	}
	spec := seedElasticSpec()
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	handMade(t, obj, nil)
	editWorkerContainer(t, obj, func(c map[string]any) { delete(c, "command") })
	if _, err := ReadElasticJob(obj); err == nil || !strings.Contains(err.Error(), "sets no command") {
		t.Errorf("a worker without a command: %v, want it refused as one the schema cannot say", err)
	}
}

// handMade removes this provider's record of the inputs from a Framework, and gives its workers'
// container args, as another tool would have written it.
func handMade(t *testing.T, obj *unstructured.Unstructured, args []string) {
	t.Helper()
	annotations := obj.GetAnnotations()
	delete(annotations, ElasticInputsAnnotation)
	obj.SetAnnotations(annotations)
	if len(args) == 0 {
		return
	}
	var list []any
	for _, a := range args {
		list = append(list, a)
	}
	editWorkerContainer(t, obj, func(c map[string]any) { c["args"] = list })
}

// editWorkerContainer edits the first container of a Framework's worker task role.
func editWorkerContainer(t *testing.T, obj *unstructured.Unstructured, edit func(map[string]any)) {
	t.Helper()
	var f framework
	if err := fromUnstructured(obj, &f); err != nil {
		t.Fatal(err)
	}
	container, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&f.Spec.TaskRoles[1].Task.Pod.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	edit(container)
	var c corev1.Container
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(container, &c); err != nil {
		t.Fatal(err)
	}
	f.Spec.TaskRoles[1].Task.Pod.Spec.Containers[0] = c
	edited, err := toUnstructured(&f)
	if err != nil {
		t.Fatal(err)
	}
	obj.Object = edited.Object
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

func TestReadElasticJobRoundTrip(t *testing.T) {
	spec := seedElasticSpec()
	spec.Pod.Tolerations = []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}
	spec.Pod.Labels = map[string]string{"team": "vision"}
	spec.EtcdImage = DefaultEtcdImage
	spec.EtcdCPU = "1"
	fw, _, _, err := NewElasticJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadElasticJob(fw)
	if err != nil {
		t.Fatal(err)
	}
	want := spec
	want.Pod.GPUResource = DefaultGPUResource
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadElasticJob(NewElasticJob(spec)) (-want +got):\n%s", diff)
	}
}

// etcdWait is how a worker's command waits for the job's etcd to answer.
const etcdWait = `until $(command -v python3 || command -v python) -c "import socket; socket.create_connection(('${FC_FRAMEWORK_NAME}-etcd', 2379), 2)" 2>/dev/null; do sleep 1; done; `

// A job made by a release before the wait and --max_restarts reads back as the generated
// command, not as a command edited since: upgrading the provider shows no change.
func TestReadElasticJobTakesTheEarlierGeneratedCommandAsGenerated(t *testing.T) {
	spec := seedElasticSpec()
	spec.Launcher = LauncherTorchrun
	fw, _, _, err := NewElasticJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	withCommand := func(command string) *unstructured.Unstructured {
		var f framework
		if err := fromUnstructured(fw, &f); err != nil {
			t.Fatal(err)
		}
		f.Spec.TaskRoles[workerRoleIndex].Task.Pod.Spec.Containers[0].Command = []string{"sh", "-c", command}
		obj, err := toUnstructured(&f)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	earlier := `torchrun --rdzv_backend=etcd-v2 --rdzv_endpoint=${FC_FRAMEWORK_NAME}-etcd:2379 --rdzv_id=${FC_FRAMEWORK_NAME} --nnodes=1:4 --nproc_per_node=1 /workspace/examples/imagenet/main.py --arch=resnet18 --batch-size=32 --epochs=2 /workspace/data/tiny-imagenet-200`
	read, err := ReadElasticJob(withCommand(earlier))
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Command) > 0 || read.Script != spec.Script {
		t.Errorf("the earlier generated command read as an edit: command %q, script %q", read.Command, read.Script)
	}
	if read, err = ReadElasticJob(withCommand(earlier + " --extra")); err != nil || len(read.Command) != 3 {
		t.Errorf("an edited command must read as the command: %q (%v)", read.Command, err)
	}
}

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

func TestElasticRescalePatch(t *testing.T) {
	// The seed's scale-down 4 -> 2, with one more test op: the count Terraform last read.
	var ops []map[string]any
	if err := json.Unmarshal(Elastic.RescalePatch(4, 2), &ops); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"op": "test", "path": "/spec/taskRoles/1/name", "value": "worker"},
		{"op": "test", "path": "/spec/taskRoles/1/taskNumber", "value": 4.0},
		{"op": "replace", "path": "/spec/taskRoles/1/taskNumber", "value": 2.0},
		{"op": "replace", "path": "/spec/taskRoles/1/frameworkAttemptCompletionPolicy/minSucceededTaskCount", "value": 2.0},
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	fw, _, _, err := NewElasticJob(seedElasticSpec())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := Elastic.Workers(fw); err != nil || n != 4 {
		t.Errorf("ElasticWorkers = %d, %v; want 4", n, err)
	}
}

func TestFrameworkStatus(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	node := "n1"
	status := func(state, completion string) *unstructured.Unstructured {
		attempt := map[string]any{
			"taskRoleStatuses": []any{
				map[string]any{"name": "etcd", "taskStatuses": []any{
					map[string]any{"index": int64(0), "state": "AttemptRunning", "attemptStatus": map[string]any{"podName": "pet-etcd-0", "podNodeName": node}},
				}},
				map[string]any{"name": "worker", "taskStatuses": []any{
					map[string]any{"index": int64(0), "state": "AttemptRunning", "attemptStatus": map[string]any{"podName": "pet-worker-0", "podNodeName": node}},
					map[string]any{"index": int64(1), "state": "AttemptCreationPending", "attemptStatus": map[string]any{"podName": "pet-worker-1"}},
				}},
			},
		}
		st := map[string]any{"startTime": start.Format(time.RFC3339), "state": state, "attemptStatus": attempt}
		if completion != "" {
			st["completionTime"] = start.Add(time.Minute).Format(time.RFC3339)
			attempt["completionStatus"] = map[string]any{"type": map[string]any{"name": completion}, "diagnostics": "exit 1"}
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": st}}
	}
	cases := []struct {
		obj      *unstructured.Unstructured
		phase    string
		duration time.Duration
		failure  bool
	}{
		{&unstructured.Unstructured{Object: map[string]any{}}, Pending, 0, false},
		{status("AttemptCreationPending", ""), Pending, 30 * time.Second, false},
		{status("AttemptRunning", ""), Running, 30 * time.Second, false},
		{status("Completed", "Succeeded"), Succeeded, time.Minute, false},
		{status("Completed", "Failed"), Failed, time.Minute, true},
		// An attempt ended and the framework retries: restarting is running, as in `arena get`.
		{status("AttemptCompleted", "Failed"), Running, time.Minute, false},
		{status("AttemptDeleting", ""), Running, 30 * time.Second, false},
		{retried(status("AttemptCreationPending", "")), Running, 30 * time.Second, false},
	}
	for _, c := range cases {
		got, err := readFrameworkStatus(c.obj, start.Add(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got.Phase != c.phase || got.Duration != c.duration {
			t.Errorf("state %v: phase %s duration %s, want %s %s", c.obj.Object["status"], got.Phase, got.Duration, c.phase, c.duration)
		}
		if (frameworkFailure(c.obj) != "") != c.failure {
			t.Errorf("frameworkFailure(%s) = %q", got.Phase, frameworkFailure(c.obj))
		}
	}
	got, _ := readFrameworkStatus(status("AttemptRunning", ""), start)
	want := []Instance{
		{Name: "pet-etcd-0", Role: "etcd", Phase: "AttemptRunning", Node: "n1"},
		{Name: "pet-worker-0", Role: "worker", Phase: "AttemptRunning", Node: "n1"},
		{Name: "pet-worker-1", Role: "worker", Index: 1, Phase: "AttemptCreationPending"},
	}
	if diff := cmp.Diff(want, got.Instances); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
}

func retried(obj *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(obj.Object, int64(1), "status", "retryPolicyStatus", "totalRetriedCount")
	return obj
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

func TestCheckEtcdImage(t *testing.T) {
	for image, ok := range map[string]bool{
		"quay.io/coreos/etcd:v3.4.9":             true,
		"registry.k8s.io/etcd:3.5.21-0":          true,
		"quay.io/coreos/etcd:v3.6.8":             false,
		"gcr.io/etcd-development/etcd:v4.0.0":    false,
		"localhost:5000/etcd":                    true, // no tag: nothing to check
		"etcd:latest":                            true,
		"quay.io/coreos/etcd:v3.6.0@sha256:0123": false,
		" ":                                      false,
	} {
		if err := CheckEtcdImage(image); (err == nil) != ok {
			t.Errorf("CheckEtcdImage(%q) = %v, want ok=%v", image, err, ok)
		}
	}
	spec := seedElasticSpec()
	spec.EtcdImage = "quay.io/coreos/etcd:v3.6.8"
	if _, _, _, err := NewElasticJob(spec); err == nil {
		t.Error("an etcd 3.6 image must be refused: it exits on --enable-v2")
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

func TestFrameworkStatusOfSeedCompletedFramework(t *testing.T) {
	data, err := os.ReadFile("testdata/seed-framework-completed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&obj.Object); err != nil {
		t.Fatal(err)
	}
	got, err := readFrameworkStatus(obj, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// 06:52:25 to 07:56:14, as the seed's status says.
	if got.Phase != Succeeded || got.Duration != 63*time.Minute+49*time.Second {
		t.Errorf("phase %s duration %s, want SUCCEEDED 1h3m49s", got.Phase, got.Duration)
	}
	want := []Instance{
		{Name: "pet-etcd-0", Role: "etcd", Phase: "Completed", Node: "node11"},
		{Name: "pet-worker-0", Role: "worker", Phase: "Completed", Node: "node9"},
		{Name: "pet-worker-1", Role: "worker", Index: 1, Phase: "Completed", Node: "node10"},
		{Name: "pet-worker-2", Role: "worker", Index: 2, Phase: "Completed", Node: "node6"},
	}
	if diff := cmp.Diff(want, got.Instances, cmpopts.IgnoreFields(Instance{}, "Created")); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
	// worker-2 joined at the seed's scale-up, 42 minutes into the training.
	if c := got.Instances[3].Created; !c.Equal(time.Date(2020, 7, 31, 7, 34, 55, 0, time.UTC)) {
		t.Errorf("pet-worker-2 created %s, want the scale-up's 07:34:55", c)
	}
	if n, err := Elastic.Workers(obj); err != nil || n != 3 {
		t.Errorf("ElasticWorkers = %d, %v; want 3 (after the seed's rescale)", n, err)
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
		if done, err := Elastic.Running(c.o, expect); err != nil || done != c.done {
			t.Errorf("%s: done=%v err=%v, want %v", c.name, done, err, c.done)
		}
	}
	failed := framework("Completed")
	_ = unstructured.SetNestedField(failed.Object, map[string]any{"type": map[string]any{"name": "Failed"}, "diagnostics": "exit 1"},
		"status", "attemptStatus", "completionStatus")
	if _, err := Elastic.Running(Observed{Object: failed}, expect); err == nil || !strings.Contains(err.Error(), "exit 1") {
		t.Errorf("a failed Framework ends the wait with its diagnostics: %v", err)
	}
}
