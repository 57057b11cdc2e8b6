package jobs

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func trainSpec() TrainJobSpec {
	return TrainJobSpec{
		Name: "tj", Namespace: "team",
		Runtime: RuntimeRef{Name: "torch", Kind: ClusterTrainingRuntimeKind},
		Pod: PodOptions{Image: "pytorch:2", GPUs: 1, GPUResource: DefaultGPUResource, CPU: "4", Env: map[string]string{"EPOCHS": "3"},
			SecretEnv:    map[string]SecretKey{"TOKEN": {Secret: "hf", Key: "token"}},
			Tolerations:  []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}},
			NodeSelector: map[string]string{"accelerator": "a100"}, Labels: map[string]string{"team": "vision"},
			DataVolumes: []DataVolume{{Claim: "data", MountPath: "/data"}}, ServiceAccountName: "trainer"},
		Command: []string{"torchrun", "train.py"}, Args: []string{"--lr", "0.1"}, Nodes: 2, ProcsPerNode: 4,
		RuntimeJobs: []RuntimeJob{{Name: "node", Containers: []string{"node"}}},
	}
}

// The TrainJob carries the trainer's settings in spec.trainer and the placement in this
// provider's own runtime patch, on every replicated job of the runtime; reading it gives the
// spec back.
func TestTrainJobRoundTrip(t *testing.T) {
	spec := trainSpec()
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "trainer", "numNodes"); n != 2 {
		t.Errorf("numNodes %d", n)
	}
	gpu, _, _ := unstructured.NestedString(obj.Object, "spec", "trainer", "resourcesPerNode", "limits", "nvidia.com/gpu")
	if gpu != "1" {
		t.Errorf("resourcesPerNode gpu %q", gpu)
	}
	patches, _, _ := unstructured.NestedSlice(obj.Object, "spec", "runtimePatches")
	if p, _ := patches[0].(map[string]any); len(patches) != 1 || p["manager"] != RuntimePatchManager {
		t.Fatalf("runtimePatches %v", patches)
	}
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	spec.RuntimeJobs = nil
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("read back\n%+v\nwant\n%+v", back, spec)
	}

	// Placement on every replicated job; the volume's mount only where the trainer's container is.
	spec.RuntimeJobs = []RuntimeJob{{Name: "node", Containers: []string{"node"}}, {Name: "launcher", Containers: []string{"node"}}, {Name: "dataset-initializer", Containers: []string{"dataset-initializer"}}}
	obj, err = NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "runtimePatches")
	patch, _ := jobs[0].(map[string]any)
	rjs, _, _ := unstructured.NestedSlice(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	if len(rjs) != 3 {
		t.Fatalf("replicated job patches %v", rjs)
	}
	for _, rj := range rjs {
		m, _ := rj.(map[string]any)
		tol, _, _ := unstructured.NestedSlice(m, "template", "spec", "template", "spec", "tolerations")
		containers, _, _ := unstructured.NestedSlice(m, "template", "spec", "template", "spec", "containers")
		if len(tol) != 1 {
			t.Errorf("%s: tolerations %v", m["name"], tol)
		}
		if (m["name"] == "dataset-initializer") != (len(containers) == 0) {
			t.Errorf("%s: container patches %v", m["name"], containers)
		}
	}
}

// A queued job's suspension is Kueue's, and Kueue's own runtime patch is not the configuration.
func TestReadTrainJobQueued(t *testing.T) {
	spec := trainSpec()
	spec.QueueName = "team-a"
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(obj.Object, true, "spec", "suspend")
	patches, _, _ := unstructured.NestedSlice(obj.Object, "spec", "runtimePatches")
	patches = append([]any{map[string]any{"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"replicatedJobs": []any{map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeSelector": map[string]any{"flavor": "gpu"}}}}}}}}}}}}, patches...)
	_ = unstructured.SetNestedSlice(obj.Object, patches, "spec", "runtimePatches")
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if back.Suspend || back.QueueName != "team-a" || !reflect.DeepEqual(back.Pod.NodeSelector, spec.Pod.NodeSelector) {
		t.Errorf("read %+v", back)
	}
}

func TestTrainJobRefusesWhatTheAPICannotSay(t *testing.T) {
	for name, mutate := range map[string]func(*TrainJobSpec){
		"no nodes":       func(s *TrainJobSpec) { s.Nodes = 0 },
		"envFrom":        func(s *TrainJobSpec) { s.Pod.EnvFromSecrets = []string{"s"} },
		"priority class": func(s *TrainJobSpec) { s.Pod.PriorityClassName = "high" },
		"pull policy":    func(s *TrainJobSpec) { s.Pod.ImagePullPolicy = corev1.PullAlways },
	} {
		s := trainSpec()
		mutate(&s)
		if _, err := NewTrainJob(s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A TrainJob's labels and annotations are its object's (Trainer lets them change); the pods'
// are in this provider's runtime patch (immutable while the job runs). Each reads back as its own.
func TestTrainJobLabelsAreTheObjectsAndPodLabelsThePatchs(t *testing.T) {
	spec := TrainJobSpec{Name: "tj", Namespace: "team", Runtime: RuntimeRef{Name: "torch", Kind: ClusterTrainingRuntimeKind}, Nodes: 2,
		Labels: map[string]string{"team": "vision"}, Annotations: map[string]string{"owner": "ana"},
		Pod: PodOptions{Image: "pytorch:2", Labels: map[string]string{"tier": "gold"}, Annotations: map[string]string{"sidecar": "off"}}}
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetLabels()["team"] != "vision" || obj.GetLabels()["tier"] != "" || obj.GetAnnotations()["owner"] != "ana" || obj.GetAnnotations()["sidecar"] != "" {
		t.Errorf("object labels %v annotations %v: want the job's only", obj.GetLabels(), obj.GetAnnotations())
	}
	var job trainJob
	if err := fromUnstructured(obj, &job); err != nil {
		t.Fatal(err)
	}
	p := ownPodPatch(job.Spec.RuntimePatches)
	if p == nil || p.Metadata == nil || p.Metadata.Labels["tier"] != "gold" || p.Metadata.Labels["team"] != "" || p.Metadata.Annotations["sidecar"] != "off" {
		t.Fatalf("runtime patch metadata %+v: want the pods' only", p)
	}
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Labels, spec.Labels) || !reflect.DeepEqual(back.Annotations, spec.Annotations) ||
		!reflect.DeepEqual(back.Pod.Labels, spec.Pod.Labels) || !reflect.DeepEqual(back.Pod.Annotations, spec.Pod.Annotations) {
		t.Errorf("read back labels %v %v, pods' %v %v", back.Labels, back.Annotations, back.Pod.Labels, back.Pod.Annotations)
	}
}

// Pods given the same labels and annotations as their TrainJob are marked as their own; a job
// of an earlier release, which gave its pods the object's, has no mark.
func TestTrainJobPodLabelsLikeTheObjectsAreMarkedAsTheirOwn(t *testing.T) {
	labels, annotations := map[string]string{"team": "vision"}, map[string]string{"owner": "ana"}
	spec := TrainJobSpec{Name: "tj", Namespace: "team", Runtime: RuntimeRef{Name: "torch", Kind: ClusterTrainingRuntimeKind}, Nodes: 2,
		Labels: labels, Annotations: annotations, Pod: PodOptions{Image: "pytorch:2", Labels: labels, Annotations: annotations}}
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Pod.Labels, labels) || !reflect.DeepEqual(back.Pod.Annotations, annotations) || !reflect.DeepEqual(back.Annotations, annotations) {
		t.Errorf("read back pods' %v %v, object's annotations %v", back.Pod.Labels, back.Pod.Annotations, back.Annotations)
	}
	if CopiedPodMetadata(obj, back) {
		t.Error("a job whose pods' labels are their own reads as an earlier release's")
	}
	earlier := obj.DeepCopy()
	a := earlier.GetAnnotations()
	delete(a, PodMetadataAnnotation)
	earlier.SetAnnotations(a)
	if back, err = ReadTrainJob(earlier); err != nil || !CopiedPodMetadata(earlier, back) {
		t.Errorf("an earlier release's job does not read as one (%v)", err)
	}
}

// A TrainJob's grace period reaches its pods through Trainer v2.3.0's runtime patch
// (PodSpecPatch.terminationGracePeriodSeconds), on every replicated job, and reads back.
func TestTrainJobCarriesItsPodsGracePeriod(t *testing.T) {
	spec := trainSpec()
	spec.Pod.TerminationGracePeriod = ptr.To[int64](300)
	spec.RuntimeJobs = []RuntimeJob{{Name: "node", Containers: []string{"node"}}, {Name: "launcher", Containers: []string{"node"}}}
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	patches, _, _ := unstructured.NestedSlice(obj.Object, "spec", "runtimePatches")
	patch, _ := patches[0].(map[string]any)
	jobs, _, _ := unstructured.NestedSlice(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	if len(jobs) != 2 {
		t.Fatalf("the runtime patch has %d replicated jobs, want 2", len(jobs))
	}
	for _, j := range jobs {
		rj, _ := j.(map[string]any)
		if grace, _, _ := unstructured.NestedInt64(rj, "template", "spec", "template", "spec", "terminationGracePeriodSeconds"); grace != 300 {
			t.Errorf("replicated job %v: terminationGracePeriodSeconds %d, want 300", rj["name"], grace)
		}
	}
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if g := back.Pod.TerminationGracePeriod; g == nil || *g != 300 {
		t.Errorf("read back grace period %v, want 300", g)
	}
}
