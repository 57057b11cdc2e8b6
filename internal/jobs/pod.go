// Package jobs translates plain-Go job specs into the Kubernetes objects the operators run, and
// their objects and pods back into a status like `arena get` shows. It makes no API call and
// knows nothing of Terraform.
package jobs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const (
	// DefaultGPUResource is the extended resource NVIDIA's device plugin advertises.
	DefaultGPUResource = "nvidia.com/gpu"
	// ShmMountPath is where shm_size mounts a memory-backed volume.
	ShmMountPath = "/dev/shm"

	// ManagedByLabel marks the objects this provider created, so it can tell its own leftovers
	// from somebody else's object of the same name.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "terraform-provider-training"
	// QueueLabel submits a job to a Kueue LocalQueue.
	QueueLabel = "kueue.x-k8s.io/queue-name"
	// PriorityClassLabel gives a queued job a Kueue WorkloadPriorityClass.
	PriorityClassLabel = "kueue.x-k8s.io/priority-class"

	shmVolumeName = "shm-volume"

	// NvidiaVisibleDevices is the variable NVIDIA's container runtime reads to choose the GPUs a
	// container sees. CUDA images set it to "all", so a container that requests no GPU but lands
	// on a GPU node would see every GPU there; NoGPUs hides them, as Arena does.
	NvidiaVisibleDevices = "NVIDIA_VISIBLE_DEVICES"
	NoGPUs               = "void"
)

// PodOptions are the pod-level settings every job kind shares; each kind applies them to the pod
// templates of all its roles.
type PodOptions struct {
	Image string
	// GPUs per worker pod, requested as limits of GPUResource.
	GPUs        int64
	GPUResource string
	// CPU and Memory per worker pod, as Kubernetes quantities; empty means unset. They are set as
	// both requests and limits, but for NoCPULimit: then CPU is a request alone (a role's too),
	// so that a pod may use idle CPU beyond it (data loaders are not throttled).
	CPU, Memory string
	NoCPULimit  bool
	// ExtendedResources are the worker pod's other extended resources by name (RDMA or EFA
	// devices beside the GPUs: rdma/hca, vpc.amazonaws.com/efa), whole numbers set as limits.
	ExtendedResources map[string]string

	Env map[string]string
	// SensitiveEnv names the variables of Env whose values are sensitive. The names alone are
	// recorded on the job object (SensitiveEnvAnnotation), so that an import keeps them so.
	SensitiveEnv []string
	// SecretEnv are environment variables whose values come from Secrets (secretKeyRef): the
	// values never pass through this provider. EnvFromSecrets are Secrets whose every key
	// becomes a variable (envFrom).
	SecretEnv      map[string]SecretKey
	EnvFromSecrets []string
	// WriteOnlyEnv, when set, is the Secret of the job's write-only variables (writeonly.go).
	WriteOnlyEnv       *WriteOnlyEnv
	Labels             map[string]string
	Annotations        map[string]string
	NodeSelector       map[string]string
	Tolerations        []corev1.Toleration
	PriorityClassName  string
	ServiceAccountName string
	ImagePullSecrets   []string
	ImagePullPolicy    corev1.PullPolicy
	DataVolumes        []DataVolume
	// ShmSize is the size limit of a memory-backed /dev/shm. MountShm mounts one even without a
	// limit; with neither, none is mounted.
	ShmSize  string
	MountShm bool
	// Security is the pods' and their containers' security context; nil sets none.
	Security *Security
	// SchedulerName, HostNetwork, HostIPC and TerminationGracePeriod (seconds) are the pods'
	// own fields. HostNetwork also sets dnsPolicy ClusterFirstWithHostNet, so that the pods still
	// resolve the cluster's Services (a job's rendezvous, its workers' names).
	SchedulerName        string
	HostNetwork, HostIPC bool
	// RequiredTopology and PreferredTopology are, by role, the topology level (a node label of a
	// Kueue Topology) whose one domain Kueue is to keep the role's pods in (applyTopology).
	RequiredTopology, PreferredTopology map[string]string
	TerminationGracePeriod              *int64
	// Checkpoint is where the training saves and how long a save takes (checkpoint.go); it is
	// recorded on the job object. The pods' grace is TerminationGracePeriod, which the caller
	// makes long enough for it (CheckpointGrace).
	Checkpoint *Checkpoint
	// Spread spreads each role's pods over topologies (spread.go).
	Spread []Spread
	// Roles are what a role's pods say otherwise, by role (roles.go); Patches are strategic
	// merge patches of the roles' pod templates, by role (podpatch.go), applied after everything
	// else.
	Roles   map[string]RoleOptions
	Patches map[string]string
}

// SecretKey names one key of a Secret in the job's namespace.
type SecretKey struct {
	Secret, Key string
}

// companion is what a job's companion pod (an elastic job's rendezvous etcd) takes of the job's
// pods: their priority (the training cannot outlive it, so it must not be preempted before the
// workers it serves), how images are pulled, and the job's labels and annotations. It is a CPU
// helper: it runs its own image and gets no resources, environment, volumes or GPUs of the job's,
// nor its placement (the GPU nodes its node selector and tolerations lead to); the job's roles
// setting for it gives it a placement and a priority of its own.
func (o PodOptions) companion(image string) PodOptions {
	return PodOptions{
		Image:             image,
		PriorityClassName: o.PriorityClassName,
		ImagePullSecrets:  o.ImagePullSecrets,
		ImagePullPolicy:   o.ImagePullPolicy,
		Labels:            o.Labels,
		Annotations:       o.Annotations,
		Security:          o.Security,
	}
}

// container is what differs between the containers of one job's roles.
type container struct {
	name      string
	command   []string
	resources corev1.ResourceRequirements
	ports     []corev1.ContainerPort
	// gpusDecidedElsewhere: the container's GPUs are not its resources alone, so it must not hide
	// them: the operator sets NvidiaVisibleDevices itself (mpi-operator's launcher), or Trainer
	// merges a TrainJob's resources per node into its runtime's template (either may give GPUs).
	gpusDecidedElsewhere bool
}

// requestsGPU says whether a container asks for an extended resource (a GPU): its only limits
// besides CPU and memory are the GPUs Resources sets.
func requestsGPU(r corev1.ResourceRequirements) bool {
	for name := range r.Limits {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			return true
		}
	}
	return false
}

// Resources returns requests and limits for the given CPU, memory and GPUs.
func Resources(cpu, memory string, gpus int64, gpuResource string) (corev1.ResourceRequirements, error) {
	var r corev1.ResourceRequirements
	set := func(name corev1.ResourceName, value string) error {
		if value == "" {
			return nil
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return fmt.Errorf("%s %q is not a Kubernetes quantity: %w", name, value, err)
		}
		if r.Requests == nil {
			r.Requests, r.Limits = corev1.ResourceList{}, corev1.ResourceList{}
		}
		r.Requests[name], r.Limits[name] = q, q
		return nil
	}
	if err := set(corev1.ResourceCPU, cpu); err != nil {
		return r, err
	}
	if err := set(corev1.ResourceMemory, memory); err != nil {
		return r, err
	}
	if gpus > 0 {
		if gpuResource == "" {
			gpuResource = DefaultGPUResource
		}
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[corev1.ResourceName(gpuResource)] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return r, nil
}

// WorkerResources are a worker container's resources: its CPU and memory as requests and
// limits, its GPUs and other extended resources as limits (an extended resource's request is its
// limit). An extended resource must be a whole number, and the GPUs' is given as gpus alone.
func (o PodOptions) WorkerResources() (corev1.ResourceRequirements, error) {
	r, err := Resources(o.CPU, o.Memory, o.GPUs, o.GPUResource)
	if err != nil {
		return r, err
	}
	if o.NoCPULimit {
		delete(r.Limits, corev1.ResourceCPU)
	}
	gpuResource := cmp.Or(o.GPUResource, DefaultGPUResource)
	for name, value := range o.ExtendedResources {
		if name == gpuResource {
			return r, fmt.Errorf("extended resource %s is the GPUs' resource: give it as gpus", name)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil || q.Sign() <= 0 || q.MilliValue()%1000 != 0 {
			return r, fmt.Errorf("extended resource %s = %q is not a whole number of at least 1", name, value)
		}
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[corev1.ResourceName(name)] = q
	}
	return r, nil
}

// TakeGPUs makes the extended resource of that name, if the worker has it, its GPUs, and gives
// back to ExtendedResources what was read as its GPUs before: a refresh knows the name the state
// gave the GPUs (gpu_resource_name), which a read of the object alone can only guess.
func (o *PodOptions) TakeGPUs(name string) {
	value, ok := o.ExtendedResources[name]
	if name == "" || !ok {
		return
	}
	if o.GPUResource != "" && o.GPUs > 0 {
		o.ExtendedResources[o.GPUResource] = strconv.FormatInt(o.GPUs, 10)
	}
	q, _ := resource.ParseQuantity(value)
	o.GPUs, o.GPUResource = q.Value(), name
	delete(o.ExtendedResources, name)
	if len(o.ExtendedResources) == 0 {
		o.ExtendedResources = nil
	}
}

// gpuResourceOf guesses which of a worker's extended resources are its GPUs: the one named for
// GPUs (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/xe), or the only one it has; "" when that
// says nothing (the state's gpu_resource_name tells on refresh).
func gpuResourceOf(extended map[string]string) string {
	var named []string
	for name := range extended {
		if strings.Contains(strings.ToLower(name), "gpu") {
			named = append(named, name)
		}
	}
	switch {
	case len(named) == 1:
		return named[0]
	case len(extended) == 1:
		for name := range extended {
			return name
		}
	}
	return ""
}

// podTemplate builds the pod template of one role from the shared options.
func (o PodOptions) podTemplate(c container, restartPolicy corev1.RestartPolicy) (corev1.PodTemplateSpec, error) {
	if o.Security != nil {
		if err := o.Security.Validate(); err != nil {
			return corev1.PodTemplateSpec{}, err
		}
	}
	main := corev1.Container{
		Name:            c.name,
		Image:           o.Image,
		Command:         c.command,
		Resources:       c.resources,
		Ports:           c.ports,
		ImagePullPolicy: o.ImagePullPolicy,
		Env:             envVars(o.Env),
		SecurityContext: o.Security.container(),
		// A program that exits with an error leaves its last lines in its status, which a failed
		// wait quotes (see exited).
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	for _, name := range slices.Sorted(maps.Keys(o.SecretEnv)) {
		ref := o.SecretEnv[name]
		main.Env = append(main.Env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Secret}, Key: ref.Key}}})
	}
	for _, e := range CheckpointEnv(o.Checkpoint) {
		if _, own := o.Env[e.Name]; !own {
			main.Env = append(main.Env, e)
		}
	}
	for _, secret := range o.EnvFromSecrets {
		main.EnvFrom = append(main.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}})
	}
	if w := o.WriteOnlyEnv; w != nil {
		main.EnvFrom = append(main.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: w.Secret}}})
	}
	_, set := o.Env[NvidiaVisibleDevices]
	_, fromSecret := o.SecretEnv[NvidiaVisibleDevices]
	if !set && !fromSecret && !c.gpusDecidedElsewhere && !requestsGPU(c.resources) {
		main.Env = append(main.Env, corev1.EnvVar{Name: NvidiaVisibleDevices, Value: NoGPUs})
	}
	spec := corev1.PodSpec{
		RestartPolicy:      restartPolicy,
		NodeSelector:       o.NodeSelector,
		Tolerations:        o.Tolerations,
		PriorityClassName:  o.PriorityClassName,
		ServiceAccountName: o.ServiceAccountName,
		SecurityContext:    o.Security.pod(),
		SchedulerName:      o.SchedulerName,
		HostNetwork:        o.HostNetwork,
		HostIPC:            o.HostIPC,

		TerminationGracePeriodSeconds: o.TerminationGracePeriod,
	}
	if o.HostNetwork {
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	for _, name := range o.ImagePullSecrets {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	}
	for i, v := range o.DataVolumes {
		name := "data-" + strconv.Itoa(i)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.Claim},
		}})
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: v.MountPath})
	}
	if o.ShmSize != "" || o.MountShm {
		shm := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}
		if o.ShmSize != "" {
			size, err := resource.ParseQuantity(o.ShmSize)
			if err != nil {
				return corev1.PodTemplateSpec{}, fmt.Errorf("shm_size %q is not a Kubernetes quantity: %w", o.ShmSize, err)
			}
			shm.SizeLimit = ptr.To(size)
		}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: shmVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: shm}})
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: shmVolumeName, MountPath: ShmMountPath})
	}
	spec.Containers = []corev1.Container{main}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: copyMap(o.Labels), Annotations: copyMap(o.Annotations)},
		Spec:       spec,
	}, nil
}

func envVars(env map[string]string) []corev1.EnvVar {
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	vars := make([]corev1.EnvVar, 0, len(names))
	for _, name := range names {
		vars = append(vars, corev1.EnvVar{Name: name, Value: env[name]})
	}
	if len(vars) == 0 {
		return nil
	}
	return vars
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func copyMap(m map[string]string) map[string]string { return merge(m) }
