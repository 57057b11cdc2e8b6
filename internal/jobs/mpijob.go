package jobs

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// MPI is mpi-operator's MPIJob (kubeflow.org/v2beta1): one launcher running mpirun (or
// horovodrun) and the workers it reaches over SSH.
//
// mpi-operator v0.6.0 copies the TTL, backoff limit and deadline into the launcher's batch Job
// when it creates it and never again; it reads the clean pod policy and suspend on every sync.
var MPI = withChanges(withPatchRoles(withSpecDefaults(withPriorityOrder(kubeflowKind("mpi", "MPIJob", "v2beta1", "mpijobs", "mpi-operator", "mpi-operator", JobRoleLabel, "mpiReplicaSpecs",
	RunPolicyFields{CleanPodPolicy: true, Suspend: true},
	// The hostfile ConfigMap, the workers' Service and the launcher's Job. Not its SSH key
	// Secret: the provider does not ask for permission to read Secrets. The garbage collector
	// deletes it with the rest; a job made again under the name before it has gone waits, as
	// mpi-operator retries until it has.
	ConfigMapGVR, ServiceGVR, BatchJobGVR), "mpiReplicaSpecs", mpiLauncher, kubeflowWorker),
	// mpi-operator v0.8.2's CRD defaults these, which the API server writes into every MPIJob.
	map[string]any{"spec.launcherCreationPolicy": "AtStartup", "spec.mpiImplementation": "OpenMPI", "spec.runLauncherAsWorker": false,
		"spec.slotsPerWorker": 1, "spec.sshAuthMountPath": DefaultSSHAuthMountPath}),
	"launcher", "worker"),
	// Elastic Horovod finds new workers as it runs; plain mpirun fixes its ranks when it starts.
	func(s Spec) bool { m, ok := s.(MPIJobSpec); return ok && m.Elastic != nil }, StopOpenMPI)

const (
	mpiLauncher = "Launcher"
	mpiWorker   = kubeflowWorker
)

// DefaultWorkerCommand runs the SSH daemon mpi-operator v2 expects in workers: the launcher's
// mpirun reaches them over SSH.
var DefaultWorkerCommand = []string{"/usr/sbin/sshd", "-De"}

// MPIJobSpec is everything a training_mpi_job says.
type MPIJobSpec struct {
	Name, Namespace string
	Pod             PodOptions
	// LauncherCommand runs mpirun; WorkerCommand defaults to DefaultWorkerCommand.
	LauncherCommand []string
	WorkerCommand   []string
	Workers         int32
	// SlotsPerWorker (processes per worker) defaults to the GPUs per worker, at least 1. The
	// launcher's resources are its role's (PodOptions.Roles).
	SlotsPerWorker int32
	RunPolicy      RunPolicy
	// Elastic runs elastic Horovod: the launcher runs LauncherCommand under horovodrun with
	// mpi-operator's host discovery script, so workers may be added and removed while it runs.
	// Without it the job runs plain mpirun, whose ranks are fixed when it starts.
	Elastic *MPIElastic
	// MountDataOnLauncher mounts the data volumes on the launcher too (Arena's
	// --mounts-on-launcher); by default only workers mount them, so a ReadWriteOnce claim is
	// never wanted on two nodes.
	MountDataOnLauncher bool
	// SSHAuthMountPath is where mpi-operator mounts the job's SSH keys in the launcher and the
	// workers (spec.sshAuthMountPath); "" is its default, DefaultSSHAuthMountPath, for an sshd
	// that runs as root. An unprivileged sshd (mpi-operator's own images: mpiuser) reads them in
	// its user's folder.
	SSHAuthMountPath string
}

// DefaultSSHAuthMountPath is mpi-operator v0.8.2's default spec.sshAuthMountPath.
const DefaultSSHAuthMountPath = "/root/.ssh"

// MPIElastic bounds an elastic Horovod job's workers.
type MPIElastic struct {
	MinWorkers, MaxWorkers int32
}

// DiscoverHostsScript is the script mpi-operator keeps listing the job's Running workers, in
// the ConfigMap it mounts on the launcher; elastic Horovod reads it to find its hosts.
const DiscoverHostsScript = "/etc/mpi/discover_hosts.sh"

// horovodrunPrefixLen is how long an elastic launcher command's horovodrun part is (ReadMPIJob
// recognises it); jobs made by releases before the cooldown have the shorter one.
const (
	horovodrunPrefixLen       = 14
	horovodrunPrefixLenLegacy = 11
)

// HostCooldownSeconds is the range of horovodrun's --blacklist-cooldown-range (Horovod 0.24+).
// Horovod blacklists a host where a worker failed, and a worker that a scale-down removes fails
// as its pod is deleted; mpi-operator gives the worker that a later scale-up adds the same name,
// so without a cooldown Horovod never uses that host again for the rest of the job. With it,
// the host is taken back once it is discovered again after the cooldown (1 to 2 seconds after
// the first failure, doubling with each failure of the same host, at most 300).
var HostCooldownSeconds = [2]int{1, 300}

// elasticLauncherCommand runs command under elastic horovodrun, counting processes: one per
// slot of each worker, starting with workers and staying within the bounds.
func elasticLauncherCommand(e MPIElastic, workers, slots int32, command []string) []string {
	n := func(workers int32) string { return strconv.Itoa(int(workers * slots)) }
	return append([]string{"horovodrun",
		"-np", n(workers), "--min-np", n(e.MinWorkers), "--max-np", n(e.MaxWorkers),
		"--slots-per-host", strconv.Itoa(int(slots)),
		"--host-discovery-script", DiscoverHostsScript,
		"--blacklist-cooldown-range", strconv.Itoa(HostCooldownSeconds[0]), strconv.Itoa(HostCooldownSeconds[1]),
	}, command...)
}

// readElasticLauncherCommand undoes elasticLauncherCommand, also of the releases before the
// cooldown; ok is false for any other command.
func readElasticLauncherCommand(c []string) (e MPIElastic, command []string, ok bool) {
	if len(c) < horovodrunPrefixLenLegacy || c[0] != "horovodrun" || c[9] != "--host-discovery-script" || c[10] != DiscoverHostsScript {
		return e, nil, false
	}
	prefix := horovodrunPrefixLenLegacy
	if len(c) >= horovodrunPrefixLen && c[11] == "--blacklist-cooldown-range" &&
		c[12] == strconv.Itoa(HostCooldownSeconds[0]) && c[13] == strconv.Itoa(HostCooldownSeconds[1]) {
		prefix = horovodrunPrefixLen
	}
	slots, err1 := strconv.Atoi(c[8])
	lo, err2 := strconv.Atoi(c[4])
	hi, err3 := strconv.Atoi(c[6])
	if err1 != nil || err2 != nil || err3 != nil || slots < 1 {
		return e, nil, false
	}
	return MPIElastic{MinWorkers: int32(lo / slots), MaxWorkers: int32(hi / slots)}, c[prefix:], true
}

// DefaultSlots is the slots per worker when none is set: one per GPU, at least one.
func DefaultSlots(gpus int64) int32 {
	if gpus < 1 {
		return 1
	}
	return int32(gpus)
}

// mpiJob mirrors the fields of kubeflow.org/v2beta1 MPIJob this provider sets and reads; the
// operator's own types would pull its whole dependency tree into the provider.
type mpiJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              mpiJobSpec `json:"spec"`
	Status            *jobStatus `json:"status,omitempty"`
}

type mpiJobSpec struct {
	SlotsPerWorker    *int32                  `json:"slotsPerWorker,omitempty"`
	SSHAuthMountPath  string                  `json:"sshAuthMountPath,omitempty"`
	RunPolicy         runPolicy               `json:"runPolicy,omitempty"`
	MPIImplementation string                  `json:"mpiImplementation,omitempty"`
	MPIReplicaSpecs   map[string]*replicaSpec `json:"mpiReplicaSpecs"`
}

// Kind is MPI.
func (s MPIJobSpec) Kind() *Kind { return MPI }

// WithWorkers is the spec with n workers.
func (s MPIJobSpec) WithWorkers(n int32) Spec {
	s.Workers = n
	return s
}

// Pods are the workers' pod options.
func (s MPIJobSpec) Pods() PodOptions { return s.Pod }

// Build returns the MPIJob; it has no dependents.
func (s MPIJobSpec) Build() (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	job, err := NewMPIJob(s)
	return withPatches(MPI, job, err, s.Pod)
}

// Expect is the launcher and the workers.
func (s MPIJobSpec) Expect() map[string]int {
	return map[string]int{"launcher": 1, "worker": int(s.Workers)}
}

// NewMPIJob builds the MPIJob for spec.
func NewMPIJob(spec MPIJobSpec) (*unstructured.Unstructured, error) {
	workerResources, err := spec.Pod.WorkerResources()
	if err != nil {
		return nil, err
	}
	workerCommand := spec.WorkerCommand
	if len(workerCommand) == 0 {
		workerCommand = DefaultWorkerCommand
	}
	slots := spec.SlotsPerWorker
	if slots == 0 {
		slots = DefaultSlots(spec.Pod.GPUs)
	}
	launcherCommand := spec.LauncherCommand
	if e := spec.Elastic; e != nil {
		if err := CheckWorkerBounds(spec.Workers, e.MinWorkers, e.MaxWorkers); err != nil {
			return nil, fmt.Errorf("elastic: %w", err)
		}
		launcherCommand = elasticLauncherCommand(*e, spec.Workers, slots, spec.LauncherCommand)
	}
	launcherPod := spec.Pod
	if !spec.MountDataOnLauncher {
		launcherPod.DataVolumes = nil
	}
	launcher, err := launcherPod.podTemplate(container{name: "launcher", command: launcherCommand, gpusDecidedElsewhere: true}, "")
	if err != nil {
		return nil, err
	}
	if forward := forwardedEnv(spec.Pod); forward != nil {
		launcher.Spec.Containers[0].Env = append(launcher.Spec.Containers[0].Env, *forward)
	}
	launcher.Spec.Containers[0].Env = append(launcher.Spec.Containers[0].Env, prrteEnv(spec.Pod.Env)...)
	worker, err := spec.Pod.podTemplate(container{name: "worker", command: workerCommand, resources: workerResources}, "")
	if err != nil {
		return nil, err
	}
	withOpenMPIStop(spec.Pod.Checkpoint, spec.Pod.Env, &launcher, &worker)
	job := mpiJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: MPI.GVR.GroupVersion().String(), Kind: MPI.Object},
		ObjectMeta: kubeflowMeta(spec.Name, spec.Namespace, spec.Pod, spec.RunPolicy.QueueName, spec.RunPolicy.WorkloadPriorityClass),
		Spec: mpiJobSpec{
			SlotsPerWorker:   ptr.To(slots),
			SSHAuthMountPath: spec.SSHAuthMountPath,
			RunPolicy:        spec.RunPolicy.api(),
			MPIReplicaSpecs: map[string]*replicaSpec{
				mpiLauncher: {Replicas: ptr.To[int32](1), Template: launcher, RestartPolicy: "OnFailure"},
				mpiWorker:   {Replicas: ptr.To(spec.Workers), Template: worker},
			},
		},
	}
	return toUnstructured(&job)
}

// PRRTEEnv are the settings mpi-operator v0.8.2 gives a launcher's mpirun under Open MPI 4's
// (ORTE's) names only (OMPI_MCA_orte_default_hostfile), by the names Open MPI 5's PRRTE reads,
// which ignores those: without the hostfile, an Open MPI 5 mpirun runs every rank on the
// launcher. Open MPI 4 does not read PRRTE's names. mpi-operator's ssh arguments
// (OMPI_MCA_plm_rsh_args = "-o ConnectionAttempts=10") are not given as PRTE_MCA_plm_ssh_args:
// PRRTE 3.0.8 cuts that value at its "=" when it passes it on to the daemons it starts.
var PRRTEEnv = map[string]string{
	"PRTE_MCA_prte_default_hostfile": "/etc/mpi/hostfile",
}

// prrteEnv are the PRRTEEnv variables the job does not set itself, in name order.
func prrteEnv(own map[string]string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, name := range slices.Sorted(maps.Keys(PRRTEEnv)) {
		if _, set := own[name]; !set {
			out = append(out, corev1.EnvVar{Name: name, Value: PRRTEEnv[name]})
		}
	}
	return out
}

// OpenMPIEnvList is Open MPI's MCA parameter (mca_base_env_list, as an environment variable)
// that makes mpirun pass the variables it names, from its own environment, to every rank, as
// `mpirun -x NAME` does.
const OpenMPIEnvList = "OMPI_MCA_mca_base_env_list"

// forwardedEnv makes the job's variables reach its ranks. mpi-operator v0.8.2 gives the
// launcher and the workers the pod template's variables, but the ranks a plain mpirun starts on
// a worker are started over SSH by the worker's sshd, with a new environment of its own: the
// worker container's variables are not theirs, and mpi-operator passes no -x. The launcher has
// the same variables, so its mpirun is told to pass them on (OpenMPIEnvList), by name: the
// values, Secrets' included, stay in the pods. Variables of whole Secrets (env_from_secrets)
// have no names here and do not reach the ranks, nor does anything when the job sets
// OpenMPIEnvList itself.
func forwardedEnv(o PodOptions) *corev1.EnvVar {
	_, own := o.Env[OpenMPIEnvList]
	names := slices.Concat(slices.Collect(maps.Keys(o.Env)), slices.Collect(maps.Keys(o.SecretEnv)))
	for _, e := range CheckpointEnv(o.Checkpoint) {
		if !slices.Contains(names, e.Name) {
			names = append(names, e.Name)
		}
	}
	if own || len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return &corev1.EnvVar{Name: OpenMPIEnvList, Value: strings.Join(names, ";")}
}

// ReadMPIJob recovers the spec of an MPIJob (for import and drift detection).
func ReadMPIJob(obj *unstructured.Unstructured) (MPIJobSpec, error) {
	var job mpiJob
	if err := fromUnstructured(obj, &job); err != nil {
		return MPIJobSpec{}, err
	}
	w, err := readKubeflowWorkers(MPI, job.ObjectMeta, job.Spec.RunPolicy, job.Spec.MPIReplicaSpecs)
	if err != nil {
		return MPIJobSpec{}, err
	}
	spec := MPIJobSpec{Name: job.Name, Namespace: job.Namespace, Pod: w.Pod, RunPolicy: w.RunPolicy, Workers: w.Workers, WorkerCommand: w.Command}
	launcher := job.Spec.MPIReplicaSpecs[mpiLauncher]
	if launcher == nil {
		return spec, fmt.Errorf("MPIJob %s/%s has no %s replica spec", job.Namespace, job.Name, mpiLauncher)
	}
	if len(launcher.Template.Spec.Containers) > 0 {
		c := launcher.Template.Spec.Containers[0]
		spec.LauncherCommand = c.Command
		if e, command, ok := readElasticLauncherCommand(c.Command); ok {
			spec.Elastic, spec.LauncherCommand = &e, command
		}
		spec.MountDataOnLauncher = len(readPodOptions(launcher.Template).DataVolumes) > 0
	}
	spec.SlotsPerWorker = ptr.Deref(job.Spec.SlotsPerWorker, 1)
	if p := job.Spec.SSHAuthMountPath; p != DefaultSSHAuthMountPath {
		spec.SSHAuthMountPath = p
	}
	spec.Pod.Roles = readRoles(MPI, spec, obj)
	return spec, nil
}

func jobLabels(user map[string]string, queue, priorityClass string) map[string]string {
	labels := merge(user, map[string]string{ManagedByLabel: ManagedByValue})
	if queue != "" {
		labels[QueueLabel] = queue
	}
	if priorityClass != "" {
		labels[PriorityClassLabel] = priorityClass
	}
	return labels
}

// userLabels splits the labels this provider adds (its own, the queue's and the Kueue priority
// class's) from the user's.
func userLabels(labels map[string]string) (user map[string]string, queue, priorityClass string) {
	for k, v := range labels {
		switch k {
		case ManagedByLabel:
		case QueueLabel:
			queue = v
		case PriorityClassLabel:
			priorityClass = v
		default:
			if user == nil {
				user = map[string]string{}
			}
			user[k] = v
		}
	}
	return user, queue, priorityClass
}

// IsManaged says whether this provider created obj.
func IsManaged(obj *unstructured.Unstructured) bool {
	return obj.GetLabels()[ManagedByLabel] == ManagedByValue
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	// Pod templates carry a null creationTimestamp that is noise in every diff.
	removeNullCreationTimestamps(u.Object)
	return u, nil
}

func fromUnstructured(obj *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into)
}

func removeNullCreationTimestamps(v any) {
	switch t := v.(type) {
	case map[string]any:
		if ts, ok := t["creationTimestamp"]; ok && ts == nil {
			delete(t, "creationTimestamp")
		}
		for _, child := range t {
			removeNullCreationTimestamps(child)
		}
	case []any:
		for _, child := range t {
			removeNullCreationTimestamps(child)
		}
	}
}
