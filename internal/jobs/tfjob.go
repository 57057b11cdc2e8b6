package jobs

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// TFJobGVR is training-operator's TFJob.
var TFJobGVR = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}

// training-operator's pod labels (its v1 jobs share mpi-operator's job-name label) and TFJob
// replica types.
const (
	ReplicaTypeLabel = "training.kubeflow.org/replica-type"

	tfWorker = "Worker"
	tfPS     = "PS"
	tfChief  = "Chief"
	// training-operator's webhook requires the container to have this name.
	tfContainer = "tensorflow"
)

// TFJobSpec is everything a training_tf_job says: Arena's `submit tf` with workers, parameter
// servers and an optional chief, all running the same image and command.
type TFJobSpec struct {
	Name, Namespace string
	Pod             PodOptions
	Command         []string
	Workers         int32
	// PS are parameter servers; they get PSCPU and PSMemory but no GPUs.
	PS                      int32
	PSCPU, PSMemory         string
	Chief                   bool
	CleanPodPolicy          string
	TTLSecondsAfterFinished *int32
	BackoffLimit            *int32
	ActiveDeadlineSeconds   *int64
	QueueName               string
	// DynamicWorkers sets training-operator's enableDynamicWorker: workers may come and go while
	// the job runs. It changes TF_CONFIG to the sparse form (each worker lists only itself and the
	// parameter servers) and a failed worker no longer fails the job, so it suits only a
	// parameter-server job without a chief; see CheckDynamicWorkers.
	DynamicWorkers bool
}

// CheckDynamicWorkers says why dynamic workers cannot be used with a TFJob of ps parameter
// servers and a chief or not, or nil. With the sparse TF_CONFIG a chief is told of no worker and
// no parameter server, and workers without parameter servers know of nobody: both only make
// sense in a static cluster.
func CheckDynamicWorkers(ps int32, chief bool) error {
	switch {
	case chief:
		return fmt.Errorf("a chief needs the whole cluster in its TF_CONFIG, which training-operator leaves out with dynamic workers")
	case ps < 1:
		return fmt.Errorf("dynamic workers need parameter servers: with the sparse TF_CONFIG each worker lists only itself and the parameter servers")
	}
	return nil
}

type tfJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              tfJobSpec `json:"spec"`
}

type tfJobSpec struct {
	RunPolicy      runPolicy               `json:"runPolicy,omitempty"`
	TFReplicaSpecs map[string]*replicaSpec `json:"tfReplicaSpecs"`
	// Workers may be added and removed while the job runs, which an in-place rescale needs.
	EnableDynamicWorker bool `json:"enableDynamicWorker,omitempty"`
}

// NewTFJob builds the TFJob for spec.
func NewTFJob(spec TFJobSpec) (*unstructured.Unstructured, error) {
	if spec.DynamicWorkers {
		if err := CheckDynamicWorkers(spec.PS, spec.Chief); err != nil {
			return nil, err
		}
	}
	workerResources, err := Resources(spec.Pod.CPU, spec.Pod.Memory, spec.Pod.GPUs, spec.Pod.GPUResource)
	if err != nil {
		return nil, err
	}
	worker, err := spec.Pod.podTemplate(container{name: tfContainer, command: spec.Command, resources: workerResources}, "")
	if err != nil {
		return nil, err
	}
	replicas := map[string]*replicaSpec{
		tfWorker: {Replicas: ptr.To(spec.Workers), Template: worker, RestartPolicy: "OnFailure"},
	}
	if spec.Chief {
		// The chief does the worker's job plus checkpoints and summaries: same resources.
		replicas[tfChief] = &replicaSpec{Replicas: ptr.To[int32](1), Template: worker, RestartPolicy: "OnFailure"}
	}
	if spec.PS > 0 {
		psResources, err := Resources(spec.PSCPU, spec.PSMemory, 0, "")
		if err != nil {
			return nil, fmt.Errorf("parameter servers: %w", err)
		}
		ps, err := spec.Pod.podTemplate(container{name: tfContainer, command: spec.Command, resources: psResources}, "")
		if err != nil {
			return nil, err
		}
		replicas[tfPS] = &replicaSpec{Replicas: ptr.To(spec.PS), Template: ps, RestartPolicy: "OnFailure"}
	}
	job := tfJob{
		TypeMeta: metav1.TypeMeta{APIVersion: TFJobGVR.GroupVersion().String(), Kind: "TFJob"},
		ObjectMeta: metav1.ObjectMeta{
			Name: spec.Name, Namespace: spec.Namespace,
			Labels: jobLabels(spec.Pod.Labels, spec.QueueName), Annotations: copyMap(spec.Pod.Annotations),
		},
		Spec: tfJobSpec{
			RunPolicy: runPolicy{
				CleanPodPolicy:          optional(spec.CleanPodPolicy),
				TTLSecondsAfterFinished: spec.TTLSecondsAfterFinished,
				ActiveDeadlineSeconds:   spec.ActiveDeadlineSeconds,
				BackoffLimit:            spec.BackoffLimit,
			},
			TFReplicaSpecs:      replicas,
			EnableDynamicWorker: spec.DynamicWorkers,
		},
	}
	return toUnstructured(&job)
}

// ReadTFJob recovers the spec of a TFJob (for import).
func ReadTFJob(obj *unstructured.Unstructured) (TFJobSpec, error) {
	var job tfJob
	if err := fromUnstructured(obj, &job); err != nil {
		return TFJobSpec{}, err
	}
	spec := TFJobSpec{Name: job.Name, Namespace: job.Namespace}
	worker := job.Spec.TFReplicaSpecs[tfWorker]
	if worker == nil {
		return spec, fmt.Errorf("TFJob %s/%s has no %s replica spec", job.Namespace, job.Name, tfWorker)
	}
	spec.Pod = readPodOptions(worker.Template)
	spec.Pod.Labels, spec.QueueName = userLabels(job.Labels)
	spec.Pod.Annotations = userAnnotations(job.Annotations)
	spec.Workers = ptr.Deref(worker.Replicas, 1)
	if len(worker.Template.Spec.Containers) > 0 {
		spec.Command = worker.Template.Spec.Containers[0].Command
	}
	if ps := job.Spec.TFReplicaSpecs[tfPS]; ps != nil {
		spec.PS = ptr.Deref(ps.Replicas, 1)
		psPod := readPodOptions(ps.Template)
		spec.PSCPU, spec.PSMemory = psPod.CPU, psPod.Memory
	}
	spec.Chief = job.Spec.TFReplicaSpecs[tfChief] != nil
	spec.DynamicWorkers = job.Spec.EnableDynamicWorker
	spec.CleanPodPolicy = ptr.Deref(job.Spec.RunPolicy.CleanPodPolicy, "")
	spec.TTLSecondsAfterFinished = job.Spec.RunPolicy.TTLSecondsAfterFinished
	spec.BackoffLimit = job.Spec.RunPolicy.BackoffLimit
	spec.ActiveDeadlineSeconds = job.Spec.RunPolicy.ActiveDeadlineSeconds
	return spec, nil
}

// TFWorkers returns the Worker replicas of a TFJob object.
func TFWorkers(obj *unstructured.Unstructured) (int32, error) {
	var job tfJob
	if err := fromUnstructured(obj, &job); err != nil {
		return 0, err
	}
	if w := job.Spec.TFReplicaSpecs[tfWorker]; w != nil {
		return ptr.Deref(w.Replicas, 1), nil
	}
	return 0, fmt.Errorf("TFJob %s/%s has no %s replica spec", job.Namespace, job.Name, tfWorker)
}

// TFRescalePatch changes the Worker replicas, guarded like MPIRescalePatch.
func TFRescalePatch(from, to int32) []byte {
	const path = "/spec/tfReplicaSpecs/" + tfWorker + "/replicas"
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": path, "value": from},
		{"op": "replace", "path": path, "value": to},
	})
	return patch
}

// KubeflowPodSelector selects the pods of a Kubeflow job (MPIJob, TFJob, PyTorchJob).
func KubeflowPodSelector(name string) string { return MPIJobNameLabel + "=" + name }

// TFJobRunning says whether a TFJob runs with exactly workers workers and all its parameter
// servers and chief: training-operator reports it Running and the pods of each role are
// Running, with no removed worker left.
func TFJobRunning(o Observed, workers, ps int32, chief bool) (bool, error) {
	if reason := KubeflowFailure(o); reason != "" {
		return false, fmt.Errorf("%s", reason)
	}
	if o.Object == nil {
		return false, nil
	}
	if o.Object.GetDeletionTimestamp() != nil {
		return false, fmt.Errorf("the TFJob is being deleted")
	}
	status, err := KubeflowStatus(o, ReplicaTypeLabel, time.Now())
	if err != nil {
		return false, err
	}
	if status.Phase == Succeeded {
		return true, nil
	}
	want := map[string]int{"worker": int(workers), "ps": int(ps)}
	if chief {
		want["chief"] = 1
	}
	for role, n := range want {
		running, total := RunningCount(o.Pods, ReplicaTypeLabel, role)
		if running != n || total != n {
			return false, nil
		}
	}
	return status.Phase == Running, nil
}
