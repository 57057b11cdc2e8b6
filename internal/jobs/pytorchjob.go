package jobs

import (
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// PyTorch is training-operator's PyTorchJob (kubeflow.org/v1): a master and workers that
// training-operator tells where to meet (MASTER_ADDR, WORLD_SIZE, RANK), or, with an elastic
// policy, workers that meet at a rendezvous and may come and go (PET_* for torchrun).
var PyTorch = withChanges(withPatchRoles(withPriorityOrder(kubeflowKind("pytorch", "PyTorchJob", "v1", "pytorchjobs", "training-operator", "pytorchjob-controller", ReplicaTypeLabel, "pytorchReplicaSpecs",
	trainingOperatorLiveRunPolicy, ServiceGVR), // a Service per pod
	"pytorchReplicaSpecs", pytorchMaster, pytorchWorker),
	"master", "worker"),
	// torchelastic's rendezvous takes workers as they come; a plain world is fixed at its start.
	func(s Spec) bool { p, ok := s.(PyTorchJobSpec); return ok && p.Elastic != nil }, StopSignal)

const (
	pytorchMaster = "Master"
	pytorchWorker = kubeflowWorker
	// training-operator requires the container to have this name, and finds the port workers
	// meet on by this port name.
	pytorchContainer = "pytorch"
	pytorchPortName  = "pytorchjob-port"
	// PyTorchPort is training-operator's default port for the master and the rendezvous.
	PyTorchPort = 23456
)

// RendezvousBackends are the rendezvous backends torchrun offers an elastic PyTorchJob; c10d,
// the default, needs nothing but the first worker.
var RendezvousBackends = []string{"c10d", "etcd", "etcd-v2"}

// PyTorchJobSpec is everything a training_pytorch_job says: Arena's `submit pytorch`, a master
// and workers running the same image and command, or with Elastic, workers only.
type PyTorchJobSpec struct {
	Name, Namespace string
	Pod             PodOptions
	Command         []string
	Workers         int32
	// ProcsPerNode is torchrun's --nproc_per_node (spec.nprocPerNode); 0 leaves it to the
	// operator ("auto").
	ProcsPerNode int32
	RunPolicy    RunPolicy
	Elastic      *PyTorchElastic
}

// PyTorchElastic is a PyTorchJob's elastic policy: the bounds torchrun's --nnodes=MIN:MAX sets,
// where the workers meet, and how often torchrun restarts its workers before failing.
type PyTorchElastic struct {
	MinWorkers, MaxWorkers int32
	// RendezvousBackend is torchrun's --rdzv_backend; empty is the operator's c10d.
	RendezvousBackend string
	// RendezvousEndpoint is host:port of the rendezvous; empty is the operator's default, the
	// first worker (NAME-worker-0) on PyTorchPort, where c10d's store runs.
	RendezvousEndpoint string
	MaxRestarts        *int32
}

// CheckRendezvous says why an elastic policy's rendezvous cannot work, or nil: only c10d runs in
// the job itself (on its first worker); etcd backends need an etcd server's host:port.
func CheckRendezvous(backend, endpoint string) error {
	if endpoint != "" {
		if _, _, err := splitEndpoint(endpoint); err != nil {
			return err
		}
	}
	if backend != "" && backend != "c10d" && endpoint == "" {
		return fmt.Errorf("the %s rendezvous backend needs the host:port of an etcd server: only c10d runs in the job itself", backend)
	}
	return nil
}

func splitEndpoint(endpoint string) (string, int32, error) {
	host, port, err := net.SplitHostPort(endpoint)
	n, perr := strconv.ParseUint(port, 10, 16)
	if err != nil || host == "" || perr != nil || n == 0 {
		return "", 0, fmt.Errorf("rendezvous endpoint %q is not host:port", endpoint)
	}
	return host, int32(n), nil
}

type pytorchJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              pytorchJobSpec `json:"spec"`
}

type pytorchJobSpec struct {
	RunPolicy           runPolicy               `json:"runPolicy,omitempty"`
	ElasticPolicy       *elasticPolicy          `json:"elasticPolicy,omitempty"`
	NprocPerNode        *string                 `json:"nprocPerNode,omitempty"`
	PyTorchReplicaSpecs map[string]*replicaSpec `json:"pytorchReplicaSpecs"`
}

type elasticPolicy struct {
	MinReplicas *int32  `json:"minReplicas,omitempty"`
	MaxReplicas *int32  `json:"maxReplicas,omitempty"`
	RDZVBackend *string `json:"rdzvBackend,omitempty"`
	RDZVHost    *string `json:"rdzvHost,omitempty"`
	RDZVPort    *int32  `json:"rdzvPort,omitempty"`
	MaxRestarts *int32  `json:"maxRestarts,omitempty"`
}

// Kind is PyTorch.
func (s PyTorchJobSpec) Kind() *Kind { return PyTorch }

// WithWorkers is the spec with n workers.
func (s PyTorchJobSpec) WithWorkers(n int32) Spec {
	s.Workers = n
	return s
}

// Pods are the workers' pod options.
func (s PyTorchJobSpec) Pods() PodOptions { return s.Pod }

// Build returns the PyTorchJob; it has no dependents.
func (s PyTorchJobSpec) Build() (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	job, err := NewPyTorchJob(s)
	return withPatches(PyTorch, job, err, s.Pod)
}

// Expect is the master and the workers, or the workers alone for an elastic job.
func (s PyTorchJobSpec) Expect() map[string]int {
	if s.Elastic != nil {
		return map[string]int{"worker": int(s.Workers)}
	}
	return map[string]int{"master": 1, "worker": int(s.Workers)}
}

// NewPyTorchJob builds the PyTorchJob for spec.
func NewPyTorchJob(spec PyTorchJobSpec) (*unstructured.Unstructured, error) {
	resources, err := spec.Pod.WorkerResources()
	if err != nil {
		return nil, err
	}
	template, err := spec.Pod.podTemplate(container{name: pytorchContainer, command: spec.Command, resources: resources,
		ports: []corev1.ContainerPort{{Name: pytorchPortName, ContainerPort: PyTorchPort}}}, "")
	if err != nil {
		return nil, err
	}
	replicas := map[string]*replicaSpec{
		pytorchWorker: {Replicas: ptr.To(spec.Workers), Template: template, RestartPolicy: "OnFailure"},
	}
	job := pytorchJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: PyTorch.GVR.GroupVersion().String(), Kind: PyTorch.Object},
		ObjectMeta: kubeflowMeta(spec.Name, spec.Namespace, spec.Pod, spec.RunPolicy.QueueName, spec.RunPolicy.WorkloadPriorityClass),
		Spec:       pytorchJobSpec{RunPolicy: spec.RunPolicy.api(), PyTorchReplicaSpecs: replicas},
	}
	if spec.ProcsPerNode > 0 {
		job.Spec.NprocPerNode = ptr.To(strconv.Itoa(int(spec.ProcsPerNode)))
	}
	if e := spec.Elastic; e != nil {
		if err := CheckWorkerBounds(spec.Workers, e.MinWorkers, e.MaxWorkers); err != nil {
			return nil, fmt.Errorf("elastic: %w", err)
		}
		if err := CheckRendezvous(e.RendezvousBackend, e.RendezvousEndpoint); err != nil {
			return nil, fmt.Errorf("elastic: %w", err)
		}
		// Workers only: a master would give every pod a fixed WORLD_SIZE. They meet at the first
		// worker (training-operator's default endpoint, NAME-worker-0), or at the backend's.
		job.Spec.ElasticPolicy = &elasticPolicy{MinReplicas: ptr.To(e.MinWorkers), MaxReplicas: ptr.To(e.MaxWorkers),
			RDZVBackend: optional(e.RendezvousBackend), MaxRestarts: e.MaxRestarts}
		if e.RendezvousEndpoint != "" {
			host, port, _ := splitEndpoint(e.RendezvousEndpoint)
			job.Spec.ElasticPolicy.RDZVHost, job.Spec.ElasticPolicy.RDZVPort = &host, &port
		}
	} else {
		replicas[pytorchMaster] = &replicaSpec{Replicas: ptr.To[int32](1), Template: template, RestartPolicy: "OnFailure"}
	}
	return toUnstructured(&job)
}

// ReadPyTorchJob recovers the spec of a PyTorchJob (for import).
func ReadPyTorchJob(obj *unstructured.Unstructured) (PyTorchJobSpec, error) {
	var job pytorchJob
	if err := fromUnstructured(obj, &job); err != nil {
		return PyTorchJobSpec{}, err
	}
	w, err := readKubeflowWorkers(PyTorch, job.ObjectMeta, job.Spec.RunPolicy, job.Spec.PyTorchReplicaSpecs)
	if err != nil {
		return PyTorchJobSpec{}, err
	}
	spec := PyTorchJobSpec{Name: job.Name, Namespace: job.Namespace, Pod: w.Pod, RunPolicy: w.RunPolicy, Workers: w.Workers, Command: w.Command}
	if n, err := strconv.Atoi(ptr.Deref(job.Spec.NprocPerNode, "")); err == nil {
		spec.ProcsPerNode = int32(n)
	}
	if e := job.Spec.ElasticPolicy; e != nil {
		spec.Elastic = &PyTorchElastic{MinWorkers: ptr.Deref(e.MinReplicas, spec.Workers), MaxWorkers: ptr.Deref(e.MaxReplicas, spec.Workers),
			RendezvousBackend: ptr.Deref(e.RDZVBackend, ""), MaxRestarts: e.MaxRestarts}
		if e.RDZVHost != nil && e.RDZVPort != nil {
			spec.Elastic.RendezvousEndpoint = net.JoinHostPort(*e.RDZVHost, strconv.Itoa(int(*e.RDZVPort)))
		}
	}
	spec.Pod.Roles = readRoles(PyTorch, spec, obj)
	return spec, nil
}
