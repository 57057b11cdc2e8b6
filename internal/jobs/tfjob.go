package jobs

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// TF is training-operator's TFJob (kubeflow.org/v1): workers, parameter servers and a chief,
// each told of the whole cluster in TF_CONFIG.
var TF = withChanges(withPatchRoles(withPriorityOrder(kubeflowKind("tf", "TFJob", "v1", "tfjobs", "training-operator", "tfjob-controller", ReplicaTypeLabel, "tfReplicaSpecs",
	trainingOperatorLiveRunPolicy, ServiceGVR), // a Service per pod
	"tfReplicaSpecs", tfChief, "Master", tfPS, tfWorker, "Evaluator"),
	"chief", "ps", "worker"),
	// With enableDynamicWorker the cluster spec may change while it runs.
	func(s Spec) bool { t, ok := s.(TFJobSpec); return ok && t.DynamicWorkers }, StopSignal)

// TFJob replica types.
const (
	tfWorker = kubeflowWorker
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
	// PS are parameter servers, with no GPUs; their resources are their role's (PodOptions.Roles).
	PS        int32
	Chief     bool
	RunPolicy RunPolicy
	// DynamicWorkers sets training-operator's enableDynamicWorker: workers may come and go while
	// the job runs. It changes TF_CONFIG to the sparse form (each worker lists only itself and the
	// parameter servers) and a failed worker no longer fails the job, so it suits only a
	// parameter-server job without a chief; see CheckDynamicWorkers.
	DynamicWorkers bool
}

// Kind is TF.
func (s TFJobSpec) Kind() *Kind { return TF }

// WithWorkers is the spec with n workers.
func (s TFJobSpec) WithWorkers(n int32) Spec {
	s.Workers = n
	return s
}

// Pods are the workers' pod options.
func (s TFJobSpec) Pods() PodOptions { return s.Pod }

// Build returns the TFJob; it has no dependents.
func (s TFJobSpec) Build() (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	job, err := NewTFJob(s)
	return withPatches(TF, job, err, s.Pod)
}

// Expect is the workers, the parameter servers and the chief.
func (s TFJobSpec) Expect() map[string]int {
	expect := map[string]int{"worker": int(s.Workers), "ps": int(s.PS)}
	if s.Chief {
		expect["chief"] = 1
	}
	return expect
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
	workerResources, err := spec.Pod.WorkerResources()
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
		ps, err := spec.Pod.podTemplate(container{name: tfContainer, command: spec.Command}, "")
		if err != nil {
			return nil, err
		}
		replicas[tfPS] = &replicaSpec{Replicas: ptr.To(spec.PS), Template: ps, RestartPolicy: "OnFailure"}
	}
	job := tfJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: TF.GVR.GroupVersion().String(), Kind: TF.Object},
		ObjectMeta: kubeflowMeta(spec.Name, spec.Namespace, spec.Pod, spec.RunPolicy.QueueName, spec.RunPolicy.WorkloadPriorityClass),
		Spec: tfJobSpec{
			RunPolicy:           spec.RunPolicy.api(),
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
	w, err := readKubeflowWorkers(TF, job.ObjectMeta, job.Spec.RunPolicy, job.Spec.TFReplicaSpecs)
	if err != nil {
		return TFJobSpec{}, err
	}
	spec := TFJobSpec{Name: job.Name, Namespace: job.Namespace, Pod: w.Pod, RunPolicy: w.RunPolicy, Workers: w.Workers, Command: w.Command}
	if ps := job.Spec.TFReplicaSpecs[tfPS]; ps != nil {
		spec.PS = ptr.Deref(ps.Replicas, 1)
	}
	spec.Chief = job.Spec.TFReplicaSpecs[tfChief] != nil
	spec.DynamicWorkers = job.Spec.EnableDynamicWorker
	spec.Pod.Roles = readRoles(TF, spec, obj)
	return spec, nil
}
