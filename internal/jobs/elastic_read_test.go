package jobs

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

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
		Command: command, Workers: 4, MinWorkers: 1, MaxWorkers: 4, ProcsPerNode: 1, MaxRetryCount: 2, PodGracefulDeletionTimeout: 1800}
	// The seed's etcd image is not the default: its role says it.
	want.Pod.Roles = map[string]RoleOptions{EtcdRole: {Image: "quay.io/coreos/etcd:v3.4.9"}}
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

func TestReadElasticJobRoundTrip(t *testing.T) {
	spec := seedElasticSpec()
	spec.Pod.Tolerations = []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}
	spec.Pod.Labels = map[string]string{"team": "vision"}
	spec.Pod.Roles = nil // a role's settings are read by ReadRoleOptions
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
