package jobs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// Runtime frameworks: the ML policy a runtime gives its jobs. torch: torchrun's PET_*
// environment on every node; mpi: an MPI launcher with a hostfile and SSH keys over nodes that
// run sshd; plain: the nodes alone, with nothing generated.
const (
	FrameworkTorch = "torch"
	FrameworkMPI   = "mpi"
	FrameworkPlain = "plain"
)

// Frameworks lists them.
var Frameworks = []string{FrameworkTorch, FrameworkMPI, FrameworkPlain}

// MPIImplementations are the MPI implementations Trainer v2.3.0 makes jobs for. Its CRD also
// takes Intel and MPICH, but its MPI plugin fails every job of those ("MPI implementation for
// ... doesn't supported"): a runtime that names one is refused at plan.
var MPIImplementations = []string{"OpenMPI"}

const (
	// FrameworkLabel names a runtime's framework for Trainer's SDK, which lists runtimes by it.
	FrameworkLabel = "trainer.kubeflow.org/framework"
	// ancestorLabel marks the replicated job the TrainJob's trainer settings override.
	ancestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step"
	// trainerLauncher is an MPI runtime's launcher: the replicated job that runs mpirun.
	trainerLauncher = "launcher"
)

// DefaultMPIPolicy is an MPI runtime's policy where it says nothing, shaped as Trainer's own MPI
// runtime (deepspeed-distributed at v2.3.0) on mpi-operator's base image: the launcher and the
// nodes run as mpiuser (uid 1000), the nodes run that user's SSH server (its config file in the
// image: port 2222, host key and authorized keys from the mounted keys, StrictModes off), and the
// keys are mounted in that user's home. Trainer mounts the private key 0640 and owned by root,
// with the pod's fsGroup as its group: a non-root user reads it through that group, while root,
// its owner, is refused it by OpenSSH ("UNPROTECTED PRIVATE KEY FILE"), so a runtime run as root
// cannot ssh from its launcher (Trainer's CRD default, /root/.ssh, is of no use to it).
func DefaultMPIPolicy() MPIPolicy {
	return MPIPolicy{ProcsPerNode: 1, Implementation: "OpenMPI", SSHAuthMountPath: "/home/mpiuser/.ssh", RunAsUser: 1000,
		NodeCommand: []string{"/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"}}
}

// RuntimeSpec is everything a training_runtime says.
type RuntimeSpec struct {
	// Name, and the namespace of a TrainingRuntime; none for a ClusterTrainingRuntime.
	Name, Namespace string
	Labels          map[string]string
	Framework       string
	// Nodes is the node count of jobs that do not say theirs (mlPolicy.numNodes).
	Nodes int32
	// Pod is the node template: image, resources, env, placement of every node.
	Pod PodOptions
	// Command is the trainer's default command: each torch or plain node's, or the MPI launcher's.
	Command []string
	MPI     *MPIPolicy
	// GangTimeoutSeconds, when set, makes Trainer schedule the job's pods as a gang through
	// scheduler-plugins' coscheduling (podGroupPolicy.coscheduling), giving up after that long.
	GangTimeoutSeconds *int32
}

// MPIPolicy is an MPI runtime's ML policy.
type MPIPolicy struct {
	ProcsPerNode      int32
	Implementation    string
	SSHAuthMountPath  string
	RunLauncherAsNode bool
	// RunAsUser is the user of the launcher's and the nodes' containers (runAsUser, and the pods'
	// fsGroup, which makes the mounted keys readable to it); 0 is root, and sets no fsGroup.
	RunAsUser int64
	// NodeCommand is what the nodes run.
	NodeCommand []string
}

// Kind is the runtime's kind: namespaced or cluster-wide.
func (s RuntimeSpec) Kind() string {
	if s.Namespace == "" {
		return ClusterTrainingRuntimeKind
	}
	return TrainingRuntimeKind
}

// GVR is the runtime's API.
func (s RuntimeSpec) GVR() schema.GroupVersionResource {
	if s.Namespace == "" {
		return ClusterTrainingRuntimeGVR
	}
	return TrainingRuntimeGVR
}

type trainingRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              runtimeSpec `json:"spec"`
}

type runtimeSpec struct {
	MLPolicy       *mlPolicy       `json:"mlPolicy,omitempty"`
	PodGroupPolicy *podGroupPolicy `json:"podGroupPolicy,omitempty"`
	Template       struct {
		Spec jobSetSpec `json:"spec"`
	} `json:"template"`
}

type mlPolicy struct {
	NumNodes *int32         `json:"numNodes,omitempty"`
	Torch    *struct{}      `json:"torch,omitempty"`
	MPI      *mpiPolicySpec `json:"mpi,omitempty"`
}

type mpiPolicySpec struct {
	NumProcPerNode    *int32  `json:"numProcPerNode,omitempty"`
	MPIImplementation *string `json:"mpiImplementation,omitempty"`
	SSHAuthMountPath  *string `json:"sshAuthMountPath,omitempty"`
	RunLauncherAsNode *bool   `json:"runLauncherAsNode,omitempty"`
}

type podGroupPolicy struct {
	Coscheduling *struct {
		ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
	} `json:"coscheduling,omitempty"`
}

type jobSetSpec struct {
	Network *struct {
		PublishNotReadyAddresses *bool `json:"publishNotReadyAddresses,omitempty"`
	} `json:"network,omitempty"`
	SuccessPolicy *struct {
		Operator             string   `json:"operator"`
		TargetReplicatedJobs []string `json:"targetReplicatedJobs,omitempty"`
	} `json:"successPolicy,omitempty"`
	ReplicatedJobs []replicatedJob `json:"replicatedJobs"`
}

type replicatedJob struct {
	Name      string `json:"name"`
	DependsOn []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"dependsOn,omitempty"`
	Template struct {
		Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec     struct {
			// Parallelism is how many pods of the job run at once (the trainer's job: Trainer sets it).
			Parallelism *int32                 `json:"parallelism,omitempty"`
			Template    corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	} `json:"template"`
}

// NewRuntime builds the TrainingRuntime or ClusterTrainingRuntime for spec: a JobSet template of
// one replicated job "node" (torch, plain), or of "node" and a "launcher" that starts once the
// nodes are ready and decides the job's success (MPI), as Trainer's own MPI runtimes are made.
func NewRuntime(s RuntimeSpec) (*unstructured.Unstructured, error) {
	if s.Framework != FrameworkMPI && s.MPI != nil {
		return nil, fmt.Errorf("an MPI policy needs framework %q, not %q", FrameworkMPI, s.Framework)
	}
	if s.Namespace == "" && s.Pod.WriteOnlyEnv != nil {
		return nil, fmt.Errorf("a ClusterTrainingRuntime cannot take write-only variables: its jobs run in every namespace, and their " +
			"Secret would be in one. Give the runtime a namespace (a TrainingRuntime), or give each TrainJob its own sensitive_env_wo")
	}
	resources, err := s.Pod.WorkerResources()
	if err != nil {
		return nil, err
	}
	r := trainingRuntime{
		TypeMeta: metav1.TypeMeta{APIVersion: TrainingRuntimeGVR.GroupVersion().String(), Kind: s.Kind()},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: merge(map[string]string{FrameworkLabel: s.Framework}, s.Labels, map[string]string{ManagedByLabel: ManagedByValue}),
			// The runtime's own annotations are the names of its sensitive variables alone (its
			// annotations attribute is its pod templates').
			Annotations: jobAnnotations(PodOptions{SensitiveEnv: s.Pod.SensitiveEnv, Checkpoint: s.Pod.Checkpoint, WriteOnlyEnv: s.Pod.WriteOnlyEnv})},
	}
	r.Spec.MLPolicy = &mlPolicy{NumNodes: positive(s.Nodes)}
	if s.GangTimeoutSeconds != nil {
		r.Spec.PodGroupPolicy = &podGroupPolicy{Coscheduling: &struct {
			ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
		}{ScheduleTimeoutSeconds: s.GangTimeoutSeconds}}
	}
	role := func(name string, command []string, trainer bool) (replicatedJob, error) {
		t, err := s.Pod.podTemplate(container{name: TrainerNode, command: command, resources: resources, gpusDecidedElsewhere: true}, "")
		if err != nil {
			return replicatedJob{}, err
		}
		rj := replicatedJob{Name: name}
		rj.Template.Spec.Template = t
		if trainer {
			rj.Template.Metadata = &metav1.ObjectMeta{Labels: map[string]string{ancestorLabel: "trainer"}}
		}
		return rj, nil
	}
	switch s.Framework {
	case FrameworkTorch, FrameworkPlain:
		if s.Framework == FrameworkTorch {
			r.Spec.MLPolicy.Torch = &struct{}{}
		}
		node, err := role(TrainerNode, s.Command, true)
		if err != nil {
			return nil, err
		}
		r.Spec.Template.Spec.ReplicatedJobs = []replicatedJob{node}
	case FrameworkMPI:
		m := ptr.Deref(s.MPI, DefaultMPIPolicy())
		if s.Pod.Security != nil && s.Pod.Security.RunAsUser != nil {
			return nil, fmt.Errorf("an MPI runtime's user is its mpi run_as_user (Trainer's ssh set-up is made for it), not the security context's run_as_user")
		}
		r.Spec.MLPolicy.MPI = &mpiPolicySpec{NumProcPerNode: positive(m.ProcsPerNode), MPIImplementation: optional(m.Implementation),
			SSHAuthMountPath: optional(m.SSHAuthMountPath), RunLauncherAsNode: ptr.To(m.RunLauncherAsNode)}
		nodeCommand := m.NodeCommand
		if len(nodeCommand) == 0 {
			nodeCommand = DefaultMPIPolicy().NodeCommand
		}
		node, err := role(TrainerNode, nodeCommand, false)
		if err != nil {
			return nil, err
		}
		launcher, err := role(trainerLauncher, s.Command, true)
		if err != nil {
			return nil, err
		}
		for _, t := range []*corev1.PodTemplateSpec{&node.Template.Spec.Template, &launcher.Template.Spec.Template} {
			c := &t.Spec.Containers[0]
			c.SecurityContext = cmp.Or(c.SecurityContext, &corev1.SecurityContext{})
			c.SecurityContext.RunAsUser = ptr.To(m.RunAsUser)
			if m.RunAsUser != 0 && (s.Pod.Security == nil || s.Pod.Security.FSGroup == nil) {
				// The ssh keys Trainer mounts are readable by the user MPI runs as.
				t.Spec.SecurityContext = cmp.Or(t.Spec.SecurityContext, &corev1.PodSecurityContext{})
				t.Spec.SecurityContext.FSGroup = ptr.To(m.RunAsUser)
			}
		}
		withOpenMPIStop(s.Pod.Checkpoint, s.Pod.Env, &launcher.Template.Spec.Template, &node.Template.Spec.Template)
		// Trainer names its hostfile (at the path mpi-operator's is) for Open MPI 4 alone.
		l := &launcher.Template.Spec.Template.Spec.Containers[0]
		l.Env = append(l.Env, prrteEnv(s.Pod.Env)...)
		launcher.DependsOn = append(launcher.DependsOn, struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		}{Name: TrainerNode, Status: "Ready"})
		spec := &r.Spec.Template.Spec
		spec.Network = &struct {
			PublishNotReadyAddresses *bool `json:"publishNotReadyAddresses,omitempty"`
		}{PublishNotReadyAddresses: ptr.To(true)}
		spec.SuccessPolicy = &struct {
			Operator             string   `json:"operator"`
			TargetReplicatedJobs []string `json:"targetReplicatedJobs,omitempty"`
		}{Operator: "All", TargetReplicatedJobs: []string{trainerLauncher}}
		spec.ReplicatedJobs = []replicatedJob{node, launcher}
	default:
		return nil, fmt.Errorf("framework %q is not one of %v", s.Framework, Frameworks)
	}
	if len(s.Pod.Roles) > 0 {
		return nil, fmt.Errorf("a runtime's roles are its replicated jobs, set by its framework: roles is for jobs")
	}
	obj, err := toUnstructured(&r)
	if err == nil {
		err = applySpread(obj, runtimeTemplates(obj), s.Pod.Spread, runtimeRoleSelector)
	}
	if err == nil {
		err = setTopology(runtimeTemplates(obj), s.Pod.RequiredTopology, s.Pod.PreferredTopology)
	}
	if err == nil {
		err = patchTemplates(runtimeTemplates(obj), s.Pod.Patches)
	}
	return obj, err
}

// runtimeTemplates are the pod templates of a runtime's replicated jobs, by name, as the
// object's own maps.
func runtimeTemplates(obj *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	rjs, _ := valueAt(obj.Object, "spec.template.spec").(map[string]any)
	list, _ := rjs["replicatedJobs"].([]any)
	for _, x := range list {
		rj, _ := x.(map[string]any)
		name, _ := rj["name"].(string)
		if t, ok := valueAt(rj, "template.spec.template").(map[string]any); ok {
			out[name] = t
		}
	}
	return out
}

// ReadRuntime recovers the spec of a training runtime (for import and refresh).
func ReadRuntime(obj *unstructured.Unstructured) (RuntimeSpec, error) {
	var r trainingRuntime
	if err := fromUnstructured(obj, &r); err != nil {
		return RuntimeSpec{}, err
	}
	s := RuntimeSpec{Name: r.Name, Namespace: r.Namespace, Framework: FrameworkPlain}
	if p := r.Spec.PodGroupPolicy; p != nil && p.Coscheduling != nil {
		s.GangTimeoutSeconds = p.Coscheduling.ScheduleTimeoutSeconds
	}
	if p := r.Spec.MLPolicy; p != nil {
		s.Nodes = ptr.Deref(p.NumNodes, 0)
		switch {
		case p.Torch != nil:
			s.Framework = FrameworkTorch
		case p.MPI != nil:
			s.Framework = FrameworkMPI
			s.MPI = &MPIPolicy{ProcsPerNode: ptr.Deref(p.MPI.NumProcPerNode, 0), Implementation: ptr.Deref(p.MPI.MPIImplementation, ""),
				SSHAuthMountPath: ptr.Deref(p.MPI.SSHAuthMountPath, ""), RunLauncherAsNode: ptr.Deref(p.MPI.RunLauncherAsNode, false)}
		}
	}
	labels := map[string]string{}
	for k, v := range r.Labels {
		if k != ManagedByLabel && (k != FrameworkLabel || v != s.Framework) {
			labels[k] = v
		}
	}
	if len(labels) > 0 {
		s.Labels = labels
	}
	// The nodes' environment: the runtime's env is on every pod, what the provider adds for the
	// launcher's mpirun (withOpenMPIStop, PRRTEEnv) on the launcher alone.
	nodesEnv := map[string]string{}
	for _, rj := range r.Spec.Template.Spec.ReplicatedJobs {
		t := rj.Template.Spec.Template
		var command []string
		var user *int64
		if len(t.Spec.Containers) > 0 {
			c := t.Spec.Containers[0]
			if rj.Name == TrainerNode {
				for _, e := range c.Env {
					nodesEnv[e.Name] = e.Value
				}
			}
			// A runtime made elsewhere may split the nodes' command as Trainer's own does.
			command = slices.Concat(c.Command, c.Args)
			if c.SecurityContext != nil {
				user = c.SecurityContext.RunAsUser
			}
		}
		trainerJob := rj.Template.Metadata != nil && rj.Template.Metadata.Labels[ancestorLabel] == "trainer"
		if rj.Name == TrainerNode && s.MPI != nil {
			s.MPI.NodeCommand = command
			// No runAsUser is the image's user: root in the images MPI runs on.
			s.MPI.RunAsUser = ptr.Deref(user, 0)
		}
		if trainerJob {
			s.Pod, s.Command = readPodOptions(t), command
			match, keys, _ := runtimeRoleSelector("", rj.Name)
			s.Pod.Spread = ownSpread(t, match, keys)
			s.Pod.Labels = t.Labels
			if s.MPI != nil {
				s.Pod.Security = withoutMPIGroup(s.Pod.Security, s.MPI.RunAsUser)
			}
		}
	}
	s.Pod.RequiredTopology, s.Pod.PreferredTopology = readTopology(runtimeTemplates(obj))
	s.Pod.Checkpoint = checkpointOf(r.Annotations)
	withoutCheckpointEnv(&s.Pod)
	if s.Framework == FrameworkMPI {
		launcherOnly := maps.Clone(PRRTEEnv)
		if c := s.Pod.Checkpoint; c != nil {
			launcherOnly[OpenMPISigkillTimeout] = strconv.FormatInt(c.SaveSeconds, 10)
		}
		for name, v := range launcherOnly {
			if _, own := nodesEnv[name]; !own && s.Pod.Env[name] == v {
				delete(s.Pod.Env, name)
			}
		}
		if len(s.Pod.Env) == 0 {
			s.Pod.Env = nil
		}
	}
	readWriteOnlyEnv(&s.Pod, r.Name, r.Annotations)
	readSensitiveEnv(&s.Pod, r.Labels, r.Annotations)
	return s, nil
}

// withoutMPIGroup is a runtime's security context read back without the fsGroup an MPI runtime
// is given by default: its run_as_user's.
func withoutMPIGroup(s *Security, user int64) *Security {
	if s == nil || user == 0 || s.FSGroup == nil || *s.FSGroup != user {
		return s
	}
	out := *s
	out.FSGroup = nil
	if out.pod() == nil && out.container() == nil {
		return nil
	}
	return &out
}
