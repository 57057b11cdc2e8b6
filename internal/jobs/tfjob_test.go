package jobs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Arena's `submit tf --workers 2 --ps 1 --chief --gpus 1 --toleration gpu_node`.
func arenaTFSpec() TFJobSpec {
	gpu, _ := ParseToleration("gpu_node")
	return TFJobSpec{
		Name: "tf-dist", Namespace: "default",
		Pod: PodOptions{Image: "tensorflow/tensorflow:2.15.0-gpu", GPUs: 1, GPUResource: DefaultGPUResource, Tolerations: []corev1.Toleration{gpu},
			Roles: map[string]RoleOptions{"ps": {CPU: "2"}}},
		Command: []string{"python", "train.py"},
		Workers: 2, PS: 1, Chief: true,
		RunPolicy: RunPolicy{CleanPodPolicy: "Running", BackoffLimit: ptr.To[int32](2)},
	}
}

func TestNewTFJob(t *testing.T) {
	obj, _, err := arenaTFSpec().Build()
	if err != nil {
		t.Fatal(err)
	}
	var job tfJob
	if err := fromUnstructured(obj, &job); err != nil {
		t.Fatal(err)
	}
	roles := map[string]int32{}
	for role, r := range job.Spec.TFReplicaSpecs {
		roles[role] = *r.Replicas
		c := r.Template.Spec.Containers[0]
		if c.Name != "tensorflow" {
			t.Errorf("%s container is named %q; training-operator requires \"tensorflow\"", role, c.Name)
		}
		if got := r.Template.Spec.Tolerations; len(got) != 1 || got[0].Key != "gpu_node" {
			t.Errorf("%s tolerations %v", role, got)
		}
		gpus := c.Resources.Limits["nvidia.com/gpu"]
		if want := map[string]int64{"Worker": 1, "Chief": 1, "PS": 0}[role]; gpus.Value() != want {
			t.Errorf("%s has %d GPUs, want %d", role, gpus.Value(), want)
		}
	}
	if diff := cmp.Diff(map[string]int32{"Worker": 2, "PS": 1, "Chief": 1}, roles); diff != "" {
		t.Errorf("replicas (-want +got):\n%s", diff)
	}
	// A static cluster: training-operator then gives every task the full TF_CONFIG.
	if job.Spec.EnableDynamicWorker {
		t.Error("enableDynamicWorker must be off unless asked for: it makes TF_CONFIG sparse")
	}
	for role, r := range job.Spec.TFReplicaSpecs {
		if got, want := visibleDevices(r.Template.Spec.Containers[0].Env), map[string]string{"PS": NoGPUs}[role]; got != want {
			t.Errorf("%s: %s=%q, want %q", role, NvidiaVisibleDevices, got, want)
		}
	}
	got, err := ReadTFJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(arenaTFSpec(), got); diff != "" {
		t.Errorf("ReadTFJob(NewTFJob(spec)) (-want +got):\n%s", diff)
	}
	if n, err := TF.Workers(obj); err != nil || n != 2 {
		t.Errorf("TFWorkers = %d, %v", n, err)
	}
}

func TestTFDynamicWorkers(t *testing.T) {
	spec := arenaTFSpec()
	spec.DynamicWorkers = true
	if _, err := NewTFJob(spec); err == nil {
		t.Error("dynamic workers with a chief must be refused")
	}
	spec.Chief = false
	obj, err := NewTFJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if on, _, _ := unstructured.NestedBool(obj.Object, "spec", "enableDynamicWorker"); !on {
		t.Error("enableDynamicWorker not set")
	}
	got, err := ReadTFJob(obj)
	if err != nil || !got.DynamicWorkers {
		t.Errorf("ReadTFJob lost DynamicWorkers: %+v, %v", got, err)
	}
	for _, c := range []struct {
		ps    int32
		chief bool
		ok    bool
	}{{1, false, true}, {0, false, false}, {2, true, false}} {
		if err := CheckDynamicWorkers(c.ps, c.chief); (err == nil) != c.ok {
			t.Errorf("CheckDynamicWorkers(%d, %v) = %v", c.ps, c.chief, err)
		}
	}
}

// visibleDevices is the NVIDIA_VISIBLE_DEVICES a container's env sets, or "".
func visibleDevices(env []corev1.EnvVar) string {
	for _, e := range env {
		if e.Name == NvidiaVisibleDevices {
			return e.Value
		}
	}
	return ""
}

func TestTFJobRunning(t *testing.T) {
	obj, err := NewTFJob(arenaTFSpec())
	if err != nil {
		t.Fatal(err)
	}
	obj.Object["status"] = map[string]any{"conditions": []any{condition("Running")}}
	p := func(name, role string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ReplicaTypeLabel: role}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	all := []corev1.Pod{p("w0", "worker"), p("w1", "worker"), p("ps0", "ps"), p("c0", "chief")}
	for _, c := range []struct {
		name string
		pods []corev1.Pod
		done bool
	}{
		{"all roles running", all, true},
		{"no chief yet", all[:3], false},
		{"a worker short", all[1:], false},
	} {
		done, _, err := TF.Running(Observed{Object: obj, Pods: c.pods}, RunningWait{Expect: arenaTFSpec().Expect()}, time.Now())
		if err != nil || done != c.done {
			t.Errorf("%s: done=%v err=%v, want %v", c.name, done, err, c.done)
		}
	}
	var none *unstructured.Unstructured
	if done, _, _ := TF.Running(Observed{Object: none}, RunningWait{Expect: arenaTFSpec().Expect()}, time.Now()); done {
		t.Error("a missing TFJob does not run")
	}
}

func TestWorkerPriorityClass(t *testing.T) {
	spec := arenaTFSpec()
	spec.Pod.PriorityClassName = "high"
	tf, _ := NewTFJob(spec)
	mpi, _ := NewMPIJob(MPIJobSpec{Name: "m", Pod: PodOptions{Image: "i", PriorityClassName: "low"}, Workers: 1})
	es := seedElasticSpec()
	es.Pod.PriorityClassName = "mid"
	fw, _, _, _ := NewElasticJob(es)
	plain, _ := NewMPIJob(MPIJobSpec{Name: "p", Pod: PodOptions{Image: "i"}, Workers: 1})
	for obj, want := range map[*unstructured.Unstructured]string{tf: "high", mpi: "low", fw: "mid", plain: ""} {
		if got := KindByName(map[string]string{"TFJob": "tf", "MPIJob": "mpi", "Framework": "elastic"}[obj.GetKind()]).PriorityClass(obj); got != want {
			t.Errorf("%s: priority %q, want %q", obj.GetKind(), got, want)
		}
	}
}

// A Kubeflow job that leaves its clean pod policy out runs with its operator's, None: it reads so.
func TestRunPolicyLeftOutReadsAsTheOperatorsDefault(t *testing.T) {
	if got := readRunPolicy(runPolicy{}, "").CleanPodPolicy; got != "None" {
		t.Errorf("a run policy without cleanPodPolicy reads %q, want None", got)
	}
}
