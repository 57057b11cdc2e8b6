package jobs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// Train is Kubeflow Trainer's TrainJob (trainer.kubeflow.org/v1alpha1): a small job that names a
// training runtime (its blueprint: a JobSet template and an ML policy) and says the image,
// command, node count and resources per node. Trainer makes a JobSet of it, named after the job,
// and JobSet a Job per replicated job of the runtime.
var Train = &Kind{
	Name: "train", Object: "TrainJob", GVR: TrainJobGVR, RoleLabel: ReplicatedJobLabel,
	Operator: "Kubeflow Trainer",
	// Trainer makes the JobSet, JobSet the Jobs and a headless Service.
	Owns:        []schema.GroupVersionResource{JobSetGVR, BatchJobGVR, ServiceGVR},
	podSelector: func(job string) string { return JobSetNameLabel + "=" + job },
	status:      trainJobStatus,
	failure:     trainJobFailure,
	workers: func(obj *unstructured.Unstructured) (int32, error) {
		n, found, err := unstructured.NestedInt64(obj.Object, "spec", "trainer", "numNodes")
		if err != nil {
			return 0, fmt.Errorf("TrainJob %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		if !found {
			return 0, fmt.Errorf("TrainJob %s/%s does not say its trainer's numNodes", obj.GetNamespace(), obj.GetName())
		}
		return int32(n), nil
	},
	// The API makes the trainer immutable: a TrainJob is never rescaled, only replaced (no
	// rescale). Its own labels, annotations and suspend change in place; its pods stop as its
	// runtime's framework says.
	live: []string{"spec.suspend"}, stop: StopRuntime,
	priorityClass: func(*unstructured.Unstructured) string { return "" },
	roles: func(obj, runtime *unstructured.Unstructured) ([]RolePods, error) {
		if runtime == nil {
			return nil, fmt.Errorf("the pods of TrainJob %s/%s are its runtime's, which was not given", obj.GetNamespace(), obj.GetName())
		}
		return TrainJobRoles(obj, runtime)
	},
	suspended: func(obj *unstructured.Unstructured) bool {
		suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
		return suspended
	},
	suspendField: []string{"spec", "suspend"},
	// Trainer v2.3.0's CRD defaults these.
	specDefaults: map[string]any{"spec.managedBy": "trainer.kubeflow.org/trainjob-controller", "spec.runtimeRef.apiGroup": TrainerGroup,
		"spec.runtimeRef.kind": ClusterTrainingRuntimeKind, "spec.suspend": false},
}

const (
	// TrainerGroup is Kubeflow Trainer's API group.
	TrainerGroup = "trainer.kubeflow.org"
	// JobSetNameLabel is on every pod of a JobSet, naming it; Trainer names a TrainJob's JobSet
	// after the TrainJob.
	JobSetNameLabel = "jobset.sigs.k8s.io/jobset-name"
	// ReplicatedJobLabel is each JobSet pod's replicated job: its role.
	ReplicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name"
	// jobCompletionIndexLabel is an Indexed Job's pod index, the node rank Trainer gives torchrun.
	jobCompletionIndexLabel = "batch.kubernetes.io/job-completion-index"
	// TrainerNode is the replicated job and the container a runtime's trainer runs in.
	TrainerNode = "node"
	// RuntimePatchManager names this provider's entry of a TrainJob's runtimePatches: each
	// manager (this provider, Kueue) owns one entry.
	RuntimePatchManager = "training.kubetrain.io/terraform-provider-training"
	// ClusterTrainingRuntimeKind and TrainingRuntimeKind are the kinds a TrainJob may reference.
	ClusterTrainingRuntimeKind = "ClusterTrainingRuntime"
	TrainingRuntimeKind        = "TrainingRuntime"
)

// TrainJobSpec is everything a training_train_job says.
type TrainJobSpec struct {
	Name, Namespace string
	// Runtime is the training runtime the job runs on.
	Runtime RuntimeRef
	// Pod are the options of every node: image, env, resources per node (cpu, memory, gpus) go
	// to the TrainJob's trainer; placement, volumes, service account, pull secrets and the pods'
	// labels and annotations to this provider's runtime patch. Trainer's API has no place for a
	// priority class, an image pull policy or env from whole Secrets.
	Pod PodOptions
	// Labels and Annotations are the TrainJob object's own, which change in place; the pods'
	// are Pod's, in the runtime patch, which Trainer keeps immutable while the job runs.
	Labels, Annotations map[string]string
	Command, Args       []string
	Nodes               int32
	// ProcsPerNode is numProcPerNode; 0 leaves it to the runtime (torch: "auto").
	ProcsPerNode int32
	Suspend      bool
	QueueName    string
	// WorkloadPriorityClass is the Kueue WorkloadPriorityClass of the queued job
	// (PriorityClassLabel); "" none.
	WorkloadPriorityClass string
	ActiveDeadlineSeconds *int64
	// RuntimeJobs are the runtime's replicated jobs (RuntimeJobs reads them from the runtime):
	// the runtime patch places the pods of every one. Without them it patches TrainerNode alone.
	RuntimeJobs []RuntimeJob
}

// RuntimeRef names a training runtime: a ClusterTrainingRuntime, or a TrainingRuntime in the
// job's namespace.
type RuntimeRef struct {
	Name, Kind string
}

// RuntimeJob is one replicated job of a runtime's JobSet template and its containers' names.
type RuntimeJob struct {
	Name       string
	Containers []string
}

// Kind is Train.
func (s TrainJobSpec) Kind() *Kind { return Train }

// WithWorkers is the spec with n nodes.
func (s TrainJobSpec) WithWorkers(n int32) Spec {
	s.Nodes = n
	return s
}

// Pods are the nodes' pod options.
func (s TrainJobSpec) Pods() PodOptions { return s.Pod }

// Build returns the TrainJob; it has no dependents (Trainer makes the JobSet, owned by the job).
func (s TrainJobSpec) Build() (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	job, err := NewTrainJob(s)
	return withPatches(Train, job, err, s.Pod)
}

// Expect is the trainer's nodes, when the runtime runs them alone (a torch runtime's one
// replicated job): a runtime with more jobs (an MPI launcher, initializers) is running when
// JobSet reports every job ready (see trainJobStatus).
func (s TrainJobSpec) Expect() map[string]int {
	if len(s.RuntimeJobs) == 1 && s.RuntimeJobs[0].Name == TrainerNode {
		return map[string]int{TrainerNode: int(s.Nodes)}
	}
	return nil
}

// NewTrainJob builds the TrainJob for spec.
func NewTrainJob(s TrainJobSpec) (*unstructured.Unstructured, error) {
	switch {
	case s.Nodes < 1:
		return nil, fmt.Errorf("a TrainJob needs at least 1 node, not %d", s.Nodes)
	case len(s.Pod.EnvFromSecrets) > 0:
		return nil, fmt.Errorf("a TrainJob cannot take env from whole Secrets: Trainer's API has no envFrom (name each variable's Secret key instead)")
	case s.Pod.PriorityClassName != "":
		return nil, fmt.Errorf("a TrainJob cannot set a priority class: Trainer's API has no place for it (set it in the runtime)")
	case s.Pod.ImagePullPolicy != "":
		return nil, fmt.Errorf("a TrainJob cannot set an image pull policy: Trainer's API has no place for it (set it in the runtime)")
	case s.Pod.SchedulerName != "" || s.Pod.HostNetwork || s.Pod.HostIPC || len(s.Pod.Spread) > 0:
		return nil, fmt.Errorf("a TrainJob cannot set its pods' scheduler, host network or IPC, or spread: Trainer v2.3.0's runtime patch has no place for them (set them in the runtime)")
	}
	resources, err := s.Pod.WorkerResources()
	if err != nil {
		return nil, err
	}
	t, err := s.Pod.podTemplate(container{name: TrainerNode, resources: resources, gpusDecidedElsewhere: true}, "")
	if err != nil {
		return nil, err
	}
	c := t.Spec.Containers[0]
	if w := s.Pod.WriteOnlyEnv; w != nil {
		c.Env = append(c.Env, w.refs()...)
	}
	job := trainJob{
		TypeMeta: metav1.TypeMeta{APIVersion: TrainJobGVR.GroupVersion().String(), Kind: Train.Object},
		ObjectMeta: kubeflowMeta(s.Name, s.Namespace, PodOptions{Labels: s.Labels, Annotations: ownPodMetadata(s), SensitiveEnv: s.Pod.SensitiveEnv,
			Checkpoint: s.Pod.Checkpoint, WriteOnlyEnv: s.Pod.WriteOnlyEnv}, s.QueueName, s.WorkloadPriorityClass),
		Spec: trainJobSpec{
			RuntimeRef: runtimeRef{Name: s.Runtime.Name, APIGroup: ptr.To(TrainerGroup), Kind: ptr.To(cmp.Or(s.Runtime.Kind, ClusterTrainingRuntimeKind))},
			Trainer: &trainer{Image: optional(c.Image), Command: s.Command, Args: s.Args, Env: c.Env, NumNodes: ptr.To(s.Nodes),
				NumProcPerNode: positive(s.ProcsPerNode)},
			Suspend:               ptr.To(s.Suspend),
			ActiveDeadlineSeconds: s.ActiveDeadlineSeconds,
		},
	}
	if len(c.Resources.Limits) > 0 || len(c.Resources.Requests) > 0 {
		job.Spec.Trainer.ResourcesPerNode = &c.Resources
	}
	if p := placementPatch(t, s.RuntimeJobs); p != nil {
		job.Spec.RuntimePatches = []runtimePatch{*p}
	}
	return toUnstructured(&job)
}

func positive(n int32) *int32 {
	if n <= 0 {
		return nil
	}
	return &n
}

// placementPatch is this provider's runtime patch: the pod template's labels, annotations,
// placement, service account, pull secrets, volumes and grace period on every replicated job of the runtime,
// and the volumes' mounts on each one's trainer container. It is nil when there is nothing to
// patch.
func placementPatch(t corev1.PodTemplateSpec, runtimeJobs []RuntimeJob) *runtimePatch {
	podSpec := podSpecPatch{
		ServiceAccountName: optional(t.Spec.ServiceAccountName),
		Volumes:            t.Spec.Volumes,
		ImagePullSecrets:   t.Spec.ImagePullSecrets,
		NodeSelector:       t.Spec.NodeSelector,
		Tolerations:        t.Spec.Tolerations,
		SecurityContext:    t.Spec.SecurityContext,

		TerminationGracePeriodSeconds: t.Spec.TerminationGracePeriodSeconds,
	}
	var meta *metav1.ObjectMeta
	if len(t.Labels) > 0 || len(t.Annotations) > 0 {
		meta = &metav1.ObjectMeta{Labels: t.Labels, Annotations: t.Annotations}
	}
	mounts, security := t.Spec.Containers[0].VolumeMounts, t.Spec.Containers[0].SecurityContext
	if meta == nil && podSpec.ServiceAccountName == nil && len(podSpec.Volumes) == 0 && len(podSpec.ImagePullSecrets) == 0 &&
		len(podSpec.NodeSelector) == 0 && len(podSpec.Tolerations) == 0 && podSpec.SecurityContext == nil && security == nil &&
		podSpec.TerminationGracePeriodSeconds == nil {
		return nil
	}
	if len(runtimeJobs) == 0 {
		runtimeJobs = []RuntimeJob{{Name: TrainerNode, Containers: []string{TrainerNode}}}
	}
	spec := &jobSetSpecPatch{}
	for _, rj := range runtimeJobs {
		s := podSpec
		if (len(mounts) > 0 || security != nil) && slices.Contains(rj.Containers, TrainerNode) {
			s.Containers = []containerPatch{{Name: TrainerNode, VolumeMounts: mounts, SecurityContext: security}}
		}
		spec.ReplicatedJobs = append(spec.ReplicatedJobs, replicatedJobPatch{Name: rj.Name,
			Template: &jobTemplatePatch{Spec: &jobSpecPatch{Template: &podTemplatePatch{Metadata: meta, Spec: &s}}}})
	}
	p := &runtimePatch{Manager: RuntimePatchManager, TrainingRuntimeSpec: &trainingRuntimeSpecPatch{Template: &jobSetTemplatePatch{Spec: spec}}}
	return p
}

// ReadTrainJob recovers the spec of a TrainJob (for import and refresh): its trainer, and the
// placement of this provider's runtime patch (see ownPodPatch). Kueue's patch is Kueue's, not
// the job's configuration.
func ReadTrainJob(obj *unstructured.Unstructured) (TrainJobSpec, error) {
	var job trainJob
	if err := fromUnstructured(obj, &job); err != nil {
		return TrainJobSpec{}, err
	}
	tr := job.Spec.Trainer
	if tr == nil {
		return TrainJobSpec{}, fmt.Errorf("TrainJob %s/%s has no trainer", job.Namespace, job.Name)
	}
	c := corev1.Container{Name: TrainerNode, Image: ptr.Deref(tr.Image, ""), Env: tr.Env}
	if tr.ResourcesPerNode != nil {
		c.Resources = *tr.ResourcesPerNode
	}
	t := corev1.PodTemplateSpec{}
	if p := ownPodPatch(job.Spec.RuntimePatches); p != nil {
		if p.Metadata != nil {
			t.Labels, t.Annotations = p.Metadata.Labels, p.Metadata.Annotations
		}
		if s := p.Spec; s != nil {
			t.Spec = corev1.PodSpec{ServiceAccountName: ptr.Deref(s.ServiceAccountName, ""), Volumes: s.Volumes, ImagePullSecrets: s.ImagePullSecrets,
				NodeSelector: s.NodeSelector, Tolerations: s.Tolerations, SecurityContext: s.SecurityContext,
				TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds}
			for _, cp := range s.Containers {
				if cp.Name == TrainerNode {
					c.VolumeMounts, c.SecurityContext = cp.VolumeMounts, cp.SecurityContext
				}
			}
		}
	}
	t.Spec.Containers = []corev1.Container{c}
	pod := readPodOptions(t)
	pod.Labels, pod.Annotations = t.Labels, t.Annotations
	pod.Checkpoint = checkpointOf(job.Annotations)
	withoutCheckpointEnv(&pod)
	readWriteOnlyRefs(&pod, job.Name, job.Annotations)
	readSensitiveEnv(&pod, job.Labels, job.Annotations)
	labels, queue, priorityClass := userLabels(job.Labels)
	return TrainJobSpec{
		Name: job.Name, Namespace: job.Namespace, Labels: labels, Annotations: userAnnotations(job.Annotations),
		Runtime: RuntimeRef{Name: job.Spec.RuntimeRef.Name, Kind: ptr.Deref(job.Spec.RuntimeRef.Kind, ClusterTrainingRuntimeKind)},
		Pod:     pod, Command: tr.Command, Args: tr.Args, Nodes: ptr.Deref(tr.NumNodes, 1), ProcsPerNode: ptr.Deref(tr.NumProcPerNode, 0),
		// Kueue suspends a queued job until it admits it: that is not the configuration's.
		Suspend:               ownSuspend(queue, job.Spec.Suspend),
		QueueName:             queue,
		WorkloadPriorityClass: priorityClass,
		ActiveDeadlineSeconds: job.Spec.ActiveDeadlineSeconds,
	}, nil
}

// kueueRuntimePatchManager is the manager of Kueue's runtime patch: the flavor's placement of
// an admitted job, Kueue's and not the job's configuration.
const kueueRuntimePatchManager = "kueue.x-k8s.io/manager"

// ownPodPatch is the pod template of this provider's runtime patch, or, on a job made by
// another tool, of its one patch that is not Kueue's: on the trainer's replicated job, else on
// the first one it patches.
func ownPodPatch(patches []runtimePatch) *podTemplatePatch {
	var others []runtimePatch
	for _, p := range patches {
		switch p.Manager {
		case RuntimePatchManager:
			return podPatchOf(p)
		case kueueRuntimePatchManager:
		default:
			others = append(others, p)
		}
	}
	if len(others) == 1 {
		return podPatchOf(others[0])
	}
	return nil
}

func podPatchOf(p runtimePatch) *podTemplatePatch {
	if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Spec == nil {
		return nil
	}
	var first *podTemplatePatch
	for _, rj := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
		if rj.Template == nil || rj.Template.Spec == nil || rj.Template.Spec.Template == nil {
			continue
		}
		if rj.Name == TrainerNode {
			return rj.Template.Spec.Template
		}
		if first == nil {
			first = rj.Template.Spec.Template
		}
	}
	return first
}

// PodMetadataAnnotation marks a TrainJob whose pods' labels and annotations were given as their
// own (a job of an earlier release gave them the object's, and carries no mark).
const PodMetadataAnnotation = "training.kubetrain.io/pod-metadata"

// CopiedPodMetadata says whether s, read from obj, is a TrainJob of an earlier release, which gave
// its pods the object's labels and annotations: its pods have exactly those, and obj no mark of
// pods' labels of their own.
func CopiedPodMetadata(obj *unstructured.Unstructured, s TrainJobSpec) bool {
	return obj.GetAnnotations()[PodMetadataAnnotation] == "" && maps.Equal(s.Pod.Labels, s.Labels) && maps.Equal(s.Pod.Annotations, s.Annotations)
}

// ownPodMetadata are the TrainJob object's annotations: the job's, and the mark of pods' labels
// or annotations of their own.
func ownPodMetadata(s TrainJobSpec) map[string]string {
	if len(s.Pod.Labels) == 0 && len(s.Pod.Annotations) == 0 {
		return s.Annotations
	}
	return merge(s.Annotations, map[string]string{PodMetadataAnnotation: "own"})
}
