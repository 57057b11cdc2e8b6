package jobs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Elastic is FrameworkController's Framework running elastic PyTorch: an etcd task role for the
// rendezvous and a worker task role, and two Services the workers find the etcd and each other by.
var Elastic = &Kind{
	Name: "elastic", Object: "Framework", Operator: "FrameworkController", RoleLabel: TaskRoleLabel,
	GVR:                 schema.GroupVersionResource{Group: "frameworkcontroller.microsoft.com", Version: "v1", Resource: "frameworks"},
	InstancesFromObject: true, OperatorDrops: frameworkControllerDrops,
	templates: frameworkTemplates, patchRoles: []string{EtcdRole, WorkerRole},
	// FrameworkController keeps each attempt's ConfigMap; the Services and NetworkPolicy are
	// the provider's own dependents, deleted and waited for by name.
	Owns:        []schema.GroupVersionResource{ConfigMapGVR},
	podSelector: func(job string) string { return FrameworkNameLabel + "=" + job },
	status:      func(o Observed, now time.Time) (Status, error) { return readFrameworkStatus(o.Object, now) },
	failure:     func(o Observed) string { return frameworkFailure(o.Object) },
	workers:     elasticWorkers,
	rescale:     elasticRescalePatch,
	// Its workers run under torchrun, whose rendezvous takes a new count while it runs.
	rescalesInPlace: always(true), stop: StopTorchrun,
	priorityClass: func(obj *unstructured.Unstructured) string {
		roles, _, _ := unstructured.NestedSlice(obj.Object, "spec", "taskRoles")
		for _, r := range roles {
			if m, ok := r.(map[string]any); ok && m["name"] == WorkerRole {
				s, _, _ := unstructured.NestedString(m, "task", "pod", "spec", "priorityClassName")
				return s
			}
		}
		return ""
	},
	roles: func(obj, _ *unstructured.Unstructured) ([]RolePods, error) { return frameworkRoles(obj) },
	// FrameworkController has no suspend: a Framework runs from its creation.
	suspended:  func(*unstructured.Unstructured) bool { return false },
	dependents: elasticDependents,
	// FrameworkController v1.0.1 writes its spec back with every field (description has no
	// omitempty).
	specDefaults: map[string]any{"spec.description": ""},
}

// elasticDependents are an elastic job's two Services and, when asked for, the NetworkPolicy of
// its etcd, in the order Build returns them.
func elasticDependents(job string) []Dependent {
	services := elasticServiceNames(job)
	return []Dependent{newDependent("Service", services[0], EtcdRole), newDependent("Service", services[1], WorkerRole),
		newDependent("NetworkPolicy", job+"-"+EtcdRole, "")}
}

// ElasticDependents are the dependents of an elastic job of that name, with or without the
// NetworkPolicy of its etcd.
func ElasticDependents(job string, etcdNetworkPolicy bool) []Dependent {
	all := elasticDependents(job)
	if etcdNetworkPolicy {
		return all
	}
	return all[:2]
}

// elasticServiceNames are an elastic job's Services, the etcd's and the workers', in the order
// Build returns them: NAME-etcd, NAME-worker.
func elasticServiceNames(job string) []string {
	return []string{job + "-" + EtcdRole, job + "-" + WorkerRole}
}

// CheckElasticName says why an elastic job cannot have that name, or nil: besides
// FrameworkController's own rule, every Service name the job derives from it (NAME-etcd,
// NAME-worker, which is also its pods' DNS subdomain, and NAME-tensorboard with a TensorBoard)
// must be a DNS label of at most 63 characters, or the objects after the Framework are refused.
func CheckElasticName(name string, tensorBoard bool) error {
	names := elasticServiceNames(name)
	if tensorBoard {
		names = append(names, TensorBoardName(name))
	}
	for _, derived := range names {
		if len(derived) > validation.DNS1035LabelMaxLength {
			return fmt.Errorf("the name %q (%d characters) is too long: the job's Service %q would have %d characters, and at most %d "+
				"are allowed; the longest name allowed is %d characters", name, len(name), derived, len(derived),
				validation.DNS1035LabelMaxLength, len(name)-(len(derived)-validation.DNS1035LabelMaxLength))
		}
	}
	return nil
}

// ElasticInputsAnnotation records on the Framework the inputs that only survive inside the
// worker's shell command (script, arguments, bounds), so that import can recover them exactly.
const ElasticInputsAnnotation = "training.kubetrain.io/elastic-inputs"

type elasticInputs struct {
	Launcher     string   `json:"launcher,omitempty"`
	Script       string   `json:"script,omitempty"`
	ScriptArgs   []string `json:"scriptArgs,omitempty"`
	Command      []string `json:"command,omitempty"`
	MinWorkers   int32    `json:"minWorkers"`
	MaxWorkers   int32    `json:"maxWorkers"`
	ProcsPerNode int32    `json:"procsPerNode"`
	// EtcdNetworkPolicy is recorded here because the NetworkPolicy is another object.
	EtcdNetworkPolicy bool `json:"etcdNetworkPolicy,omitempty"`
}

// Defaults from the FrameworkController PyTorch elastic example.
const (
	// DefaultEtcdImage is a maintained etcd 3.5 (3.4 is out of support; 3.6 dropped the v2 API
	// the rendezvous speaks), from the etcd project's own registry.
	DefaultEtcdImage                  = "quay.io/coreos/etcd:v3.5.21"
	DefaultPodGracefulDeletionTimeout = 1800
	DefaultMaxRetryCount              = 2
	// MaxTaskNumber is FrameworkController's bound on a task role's taskNumber.
	MaxTaskNumber = 10000
)

// Launchers that run an elastic job's script in each worker.
const (
	// LauncherTorchrun is PyTorch's own elastic launcher (torch >= 1.10), in every current image.
	LauncherTorchrun = "torchrun"
	// LauncherTorchelastic is the 2020 torchelastic package's launcher the seed's image ships.
	LauncherTorchelastic = "torchelastic"
)

// Launchers lists the launchers, the default first.
var Launchers = []string{LauncherTorchrun, LauncherTorchelastic}

// ElasticJobSpec is everything a training_elastic_job says: torchelastic workers that meet at
// a rendezvous in an etcd of their own, all in one Framework.
type ElasticJobSpec struct {
	Name, Namespace string
	Pod             PodOptions
	// Script and ScriptArgs run under Launcher (default LauncherTorchrun); Command replaces the
	// whole worker command instead (an escape hatch).
	Launcher   string
	Script     string
	ScriptArgs []string
	Command    []string
	Workers    int32
	MinWorkers int32
	MaxWorkers int32
	// ProcsPerNode is torchelastic's --nproc_per_node. The etcd's image (DefaultEtcdImage
	// unless its role says another) and resources are its role's (PodOptions.Roles).
	ProcsPerNode int32

	// MaxRetryCount is the framework's and each worker's retry count (fancy retry policy).
	MaxRetryCount              int32
	PodGracefulDeletionTimeout int64
	// EtcdNetworkPolicy admits to the etcd only the job's own pods: its rendezvous listens
	// without authentication.
	EtcdNetworkPolicy bool
}

// Kind is Elastic.
func (s ElasticJobSpec) Kind() *Kind { return Elastic }

// WithWorkers is the spec with n workers.
func (s ElasticJobSpec) WithWorkers(n int32) Spec {
	s.Workers = n
	return s
}

// Pods are the workers' pod options.
func (s ElasticJobSpec) Pods() PodOptions { return s.Pod }

// Build returns the Framework and its two Services, which are created first.
func (s ElasticJobSpec) Build() (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	fw, etcd, worker, err := NewElasticJob(s)
	if err == nil {
		err = applyPerRole(Elastic, fw, s.Pod)
	}
	if err != nil || !s.EtcdNetworkPolicy {
		return fw, []*unstructured.Unstructured{etcd, worker}, err
	}
	policy, err := newEtcdNetworkPolicy(s)
	return fw, []*unstructured.Unstructured{etcd, worker, policy}, err
}

// Expect is the etcd and the workers.
func (s ElasticJobSpec) Expect() map[string]int {
	return map[string]int{EtcdRole: 1, WorkerRole: int(s.Workers)}
}

// workerCommand waits for the job's etcd to answer, then runs the script under the launcher,
// with an etcd rendezvous at the job's own etcd Service, the rendezvous ID being the job's name:
// torchelastic's launcher as the example runs it, or torchrun with the same rendezvous (its
// etcd-v2 backend, PyTorch's current etcd rendezvous; like the example's, it speaks etcd's v2
// API through the python-etcd package).
//
// The wait: python-etcd does not retry, so a launcher started before its etcd answers fails at
// once ("The connection to etcd has failed"), and workers start as soon as the etcd's pod does.
// --max_restarts: a worker removed by a rescale fails the collectives of the others, which
// counts as one restart of their workers (a worker added does not); torchrun's default, 0,
// would end the job at its first scale-down.
func (s ElasticJobSpec) workerCommand() []string {
	if len(s.Command) > 0 {
		return s.Command
	}
	wait := "until $(command -v python3 || command -v python) -c " +
		`"import socket; socket.create_connection(('${FC_FRAMEWORK_NAME}-etcd', ` + strconv.Itoa(etcdPort) + `), 2)"` +
		" 2>/dev/null; do sleep 1; done; "
	return []string{"sh", "-c", wait + s.launchLine(fmt.Sprintf("--max_restarts=%d", ElasticMaxRestarts))}
}

// ElasticMaxRestarts is how often each worker's launcher restarts its training processes, each
// scale-down costing one, before the worker fails.
const ElasticMaxRestarts = 100

// legacyWorkerCommand is the command of jobs made by releases before the wait and
// --max_restarts: a refresh of such a job reads it as generated, not as edited.
func (s ElasticJobSpec) legacyWorkerCommand() []string {
	return []string{"sh", "-c", s.launchLine("")}
}

// launchLine is the launcher's command line, with extra flags after the rendezvous ones.
func (s ElasticJobSpec) launchLine(extra string) string {
	launcher, backend := "torchrun", "etcd-v2"
	if s.Launcher == LauncherTorchelastic {
		launcher, backend = "python -m torchelastic.distributed.launch", "etcd"
	}
	parts := []string{
		launcher,
		"--rdzv_backend=" + backend,
		"--rdzv_endpoint=${FC_FRAMEWORK_NAME}-etcd:" + strconv.Itoa(etcdPort),
		"--rdzv_id=${FC_FRAMEWORK_NAME}",
		fmt.Sprintf("--nnodes=%d:%d", s.MinWorkers, s.MaxWorkers),
		fmt.Sprintf("--nproc_per_node=%d", s.ProcsPerNode),
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	parts = append(parts, shellQuote(s.Script))
	for _, a := range s.ScriptArgs {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes an argument for sh -c only when it needs it, so plain arguments read as
// the example writes them.
func shellQuote(s string) string {
	if s != "" && regexp.MustCompile(`^[A-Za-z0-9_./=:,@%+-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// NewElasticJob builds the Framework and its two Services: one for the etcd, so workers find
// it, and a headless one for the workers, so they find each other.
func NewElasticJob(spec ElasticJobSpec) (fw, etcdService, workerService *unstructured.Unstructured, err error) {
	if image := spec.Pod.Roles[EtcdRole].Image; image != "" {
		if err := CheckEtcdImage(image); err != nil {
			return nil, nil, nil, &PodPatchError{Attribute: "roles", Role: EtcdRole, Err: err}
		}
	}
	if spec.Launcher == "" && len(spec.Command) == 0 {
		spec.Launcher = LauncherTorchrun
	}
	if err := CheckWorkerBounds(spec.Workers, spec.MinWorkers, spec.MaxWorkers); err != nil {
		return nil, nil, nil, err
	}
	workerResources, err := spec.Pod.WorkerResources()
	if err != nil {
		return nil, nil, nil, err
	}
	workerPod := spec.Pod
	// PyTorch's data loaders need more shared memory than a container's default 64Mi.
	workerPod.MountShm = true
	worker, err := workerPod.podTemplate(container{name: "pytorch", command: spec.workerCommand(), resources: workerResources}, corev1.RestartPolicyNever)
	if err != nil {
		return nil, nil, nil, err
	}
	// The seed's stable names: worker-0.NAME-worker is each worker's DNS name.
	worker.Spec.Hostname = "{{FC_TASKROLE_NAME}}-{{FC_TASK_INDEX}}"
	worker.Spec.Subdomain = "{{FC_FRAMEWORK_NAME}}-{{FC_TASKROLE_NAME}}"

	etcdPod := spec.Pod.companion(DefaultEtcdImage)
	etcd, err := etcdPod.podTemplate(container{name: "etcd", command: etcdCommand,
		ports: []corev1.ContainerPort{{ContainerPort: etcdPort}}}, corev1.RestartPolicyAlways)
	if err != nil {
		return nil, nil, nil, err
	}

	grace := ptr.To(spec.PodGracefulDeletionTimeout)
	f := framework{
		TypeMeta:   metav1.TypeMeta{APIVersion: Elastic.GVR.GroupVersion().String(), Kind: Elastic.Object},
		ObjectMeta: objectMeta(spec.Name, spec.Namespace, spec.Pod),
		Spec: frameworkSpec{
			ExecutionType: "Start",
			RetryPolicy:   retryPolicy{FancyRetryPolicy: true, MaxRetryCount: spec.MaxRetryCount},
			TaskRoles: []*taskRoleSpec{
				{
					Name:       EtcdRole,
					TaskNumber: 1,
					// The etcd never completes the job by itself: only its failure ends the attempt.
					FrameworkAttemptCompletionPolicy: completionPolicySpec{MinFailedTaskCount: 1, MinSucceededTaskCount: -1},
					// -2: retry the etcd without limit while only it fails.
					Task: taskSpec{RetryPolicy: retryPolicy{MaxRetryCount: -2}, PodGracefulDeletionTimeoutSec: grace, Pod: etcd},
				},
				{
					Name:       WorkerRole,
					TaskNumber: spec.Workers,
					// torchelastic has no exit barrier: the job succeeds when every worker has.
					FrameworkAttemptCompletionPolicy: completionPolicySpec{MinFailedTaskCount: 1, MinSucceededTaskCount: spec.Workers},
					Task: taskSpec{RetryPolicy: retryPolicy{FancyRetryPolicy: true, MaxRetryCount: spec.MaxRetryCount},
						PodGracefulDeletionTimeoutSec: grace, Pod: worker},
				},
			},
		},
	}
	inputs, err := json.Marshal(elasticInputs{Launcher: spec.Launcher, Script: spec.Script, ScriptArgs: spec.ScriptArgs, Command: spec.Command,
		MinWorkers: spec.MinWorkers, MaxWorkers: spec.MaxWorkers, ProcsPerNode: spec.ProcsPerNode, EtcdNetworkPolicy: spec.EtcdNetworkPolicy})
	if err != nil {
		return nil, nil, nil, err
	}
	f.Annotations = merge(f.Annotations, map[string]string{ElasticInputsAnnotation: string(inputs)})
	if fw, err = toUnstructured(&f); err != nil {
		return nil, nil, nil, err
	}
	selector := func(role string) map[string]string {
		return map[string]string{FrameworkNameLabel: spec.Name, TaskRoleLabel: role}
	}
	services := elasticServiceNames(spec.Name)
	etcdSvc := corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(services[0], spec.Namespace, PodOptions{}),
		Spec: corev1.ServiceSpec{
			Selector: selector(EtcdRole),
			Ports:    []corev1.ServicePort{{Port: etcdPort, TargetPort: intstr.FromInt32(etcdPort)}},
		},
	}
	workerSvc := corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(services[1], spec.Namespace, PodOptions{}),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 selector(WorkerRole),
		},
	}
	if etcdService, err = toUnstructured(&etcdSvc); err != nil {
		return nil, nil, nil, err
	}
	if workerService, err = toUnstructured(&workerSvc); err != nil {
		return nil, nil, nil, err
	}
	return fw, etcdService, workerService, nil
}

func objectMeta(name, namespace string, o PodOptions) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: jobLabels(o.Labels, "", ""), Annotations: jobAnnotations(o)}
}
