package jobs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
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
	InstancesFromObject: true, RunningPhase: "AttemptRunning",
	// FrameworkController keeps each attempt's ConfigMap; the Services and NetworkPolicy are
	// the provider's own dependents, deleted and waited for by name.
	Owns:        []schema.GroupVersionResource{ConfigMapGVR},
	podSelector: func(job string) string { return FrameworkNameLabel + "=" + job },
	status:      func(o Observed, now time.Time) (Status, error) { return readFrameworkStatus(o.Object, now) },
	failure:     func(o Observed) string { return frameworkFailure(o.Object) },
	workers:     elasticWorkers,
	rescale:     elasticRescalePatch,
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
}

// frameworkRoles are the roles of a Framework: its task roles.
func frameworkRoles(obj *unstructured.Unstructured) ([]RolePods, error) {
	roles, _, _ := unstructured.NestedSlice(obj.Object, "spec", "taskRoles")
	var out []RolePods
	for _, r := range roles {
		m, _ := r.(map[string]any)
		name, _ := m["name"].(string)
		count, _ := m["taskNumber"].(int64)
		pod, _, _ := unstructured.NestedMap(m, "task", "pod")
		role, err := rolePods(name, count, pod)
		if err != nil {
			return nil, err
		}
		out = append(out, role)
	}
	return out, nil
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

// ServiceGVR is the core Service.
var ServiceGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// FrameworkController's pod labels, and the task roles of an elastic job.
const (
	FrameworkNameLabel = "FC_FRAMEWORK_NAME"
	TaskRoleLabel      = "FC_TASKROLE_NAME"
	TaskIndexLabel     = "FC_TASK_INDEX"

	EtcdRole   = "etcd"
	WorkerRole = "worker"
	// workerRoleIndex is the worker role's index in spec.taskRoles, which the rescale patch tests.
	workerRoleIndex = 1
	etcdPort        = 2379
)

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

// FrameworkNamePattern is FrameworkController's rule for Framework names: no hyphens.
var FrameworkNamePattern = regexp.MustCompile(`^[a-z0-9]{1,63}$`)

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
	// ProcsPerNode is torchelastic's --nproc_per_node.
	ProcsPerNode int32

	EtcdImage           string
	EtcdCPU, EtcdMemory string

	// MaxRetryCount is the framework's and each worker's retry count (fancy retry policy).
	MaxRetryCount              int32
	PodGracefulDeletionTimeout int64
	// EtcdNetworkPolicy admits to the etcd only the job's own pods: its rendezvous listens
	// without authentication.
	EtcdNetworkPolicy bool
}

// Kind is Elastic.
func (s ElasticJobSpec) Kind() *Kind { return Elastic }

// Pods are the workers' pod options.
func (s ElasticJobSpec) Pods() PodOptions { return s.Pod }

// Build returns the Framework and its two Services, which are created first.
func (s ElasticJobSpec) Build() (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	fw, etcd, worker, err := NewElasticJob(s)
	if err != nil || !s.EtcdNetworkPolicy {
		return fw, []*unstructured.Unstructured{etcd, worker}, err
	}
	policy, err := newEtcdNetworkPolicy(s)
	return fw, []*unstructured.Unstructured{etcd, worker, policy}, err
}

// newEtcdNetworkPolicy admits to the job's etcd, on its client port, the pods of the job alone
// (FrameworkController labels every pod of a Framework with its name). Where the cluster's
// network plugin enforces NetworkPolicies, nothing else reaches the unauthenticated rendezvous.
func newEtcdNetworkPolicy(s ElasticJobSpec) (*unstructured.Unstructured, error) {
	tcp := corev1.ProtocolTCP
	port := intstr.FromInt32(etcdPort)
	policy := networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(s.Name+"-"+EtcdRole, s.Namespace, PodOptions{}),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{FrameworkNameLabel: s.Name, TaskRoleLabel: EtcdRole}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{FrameworkNameLabel: s.Name}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
		},
	}
	return toUnstructured(&policy)
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

// CheckEtcdImage says why an etcd image cannot serve the rendezvous, or nil: the etcd runs with
// --enable-v2 for the v2 API the rendezvous speaks, which etcd 3.6 removed (it refuses the flag
// and exits). A tag that names no version cannot be checked and is accepted.
func CheckEtcdImage(image string) error {
	if strings.TrimSpace(image) == "" {
		return fmt.Errorf("the etcd image is empty")
	}
	name := image
	if i := strings.LastIndex(name, "@"); i >= 0 {
		name = name[:i]
	}
	i := strings.LastIndex(name, ":")
	if i < 0 || strings.Contains(name[i:], "/") {
		return nil
	}
	m := etcdVersion.FindStringSubmatch(name[i+1:])
	if m == nil {
		return nil
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major > 3 || (major == 3 && minor >= 6) {
		return fmt.Errorf("%s is etcd %d.%d, which no longer serves the v2 API (--enable-v2) the rendezvous needs: use an etcd 3.4 or 3.5 image", image, major, minor)
	}
	return nil
}

var etcdVersion = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// shellQuote quotes an argument for sh -c only when it needs it, so plain arguments read as
// the example writes them.
func shellQuote(s string) string {
	if s != "" && regexp.MustCompile(`^[A-Za-z0-9_./=:,@%+-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// etcdCommand is the example's etcd command line, run without a shell: etcd's images have had
// none since 3.5.7 (a distroless base), and `sh -c` never starts there.
var etcdCommand = []string{
	"/usr/local/bin/etcd",
	"--data-dir", "/var/lib/etcd", "--enable-v2",
	"--listen-client-urls", "http://0.0.0.0:2379",
	"--advertise-client-urls", "http://0.0.0.0:2379",
	"--initial-cluster-state", "new",
}

// framework mirrors the fields of frameworkcontroller.microsoft.com/v1 Framework this provider
// sets; FrameworkController's own module is from Kubernetes 1.16 and cannot be imported here.
type framework struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              frameworkSpec `json:"spec"`
}

type frameworkSpec struct {
	ExecutionType string          `json:"executionType"`
	RetryPolicy   retryPolicy     `json:"retryPolicy"`
	TaskRoles     []*taskRoleSpec `json:"taskRoles"`
}

type retryPolicy struct {
	FancyRetryPolicy bool  `json:"fancyRetryPolicy"`
	MaxRetryCount    int32 `json:"maxRetryCount"`
}

type taskRoleSpec struct {
	Name                             string               `json:"name"`
	TaskNumber                       int32                `json:"taskNumber"`
	FrameworkAttemptCompletionPolicy completionPolicySpec `json:"frameworkAttemptCompletionPolicy"`
	Task                             taskSpec             `json:"task"`
}

type completionPolicySpec struct {
	MinFailedTaskCount    int32 `json:"minFailedTaskCount"`
	MinSucceededTaskCount int32 `json:"minSucceededTaskCount"`
}

type taskSpec struct {
	RetryPolicy                   retryPolicy            `json:"retryPolicy"`
	PodGracefulDeletionTimeoutSec *int64                 `json:"podGracefulDeletionTimeoutSec,omitempty"`
	Pod                           corev1.PodTemplateSpec `json:"pod"`
}

// NewElasticJob builds the Framework and its two Services: one for the etcd, so workers find
// it, and a headless one for the workers, so they find each other.
func NewElasticJob(spec ElasticJobSpec) (fw, etcdService, workerService *unstructured.Unstructured, err error) {
	if spec.EtcdImage != "" {
		if err := CheckEtcdImage(spec.EtcdImage); err != nil {
			return nil, nil, nil, err
		}
	}
	if spec.Launcher == "" && len(spec.Command) == 0 {
		spec.Launcher = LauncherTorchrun
	}
	workerResources, err := Resources(spec.Pod.CPU, spec.Pod.Memory, spec.Pod.GPUs, spec.Pod.GPUResource)
	if err != nil {
		return nil, nil, nil, err
	}
	etcdResources, err := Resources(spec.EtcdCPU, spec.EtcdMemory, 0, "")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("etcd: %w", err)
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

	etcdPod := spec.Pod.companion(ptr.Deref(optional(spec.EtcdImage), DefaultEtcdImage))
	etcd, err := etcdPod.podTemplate(container{name: "etcd", command: etcdCommand, resources: etcdResources,
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
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: jobLabels(o.Labels, ""), Annotations: copyMap(o.Annotations)}
}

// elasticRescalePatch is the example's guarded JSON patch on /spec: it tests that the task role
// at the worker index is still "worker", and that its taskNumber is still what Terraform last
// read (so a concurrent rescale is not silently overwritten), then replaces taskNumber and
// minSucceededTaskCount together.
func elasticRescalePatch(from, to int32) []byte {
	role := fmt.Sprintf("/spec/taskRoles/%d", workerRoleIndex)
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": role + "/name", "value": WorkerRole},
		{"op": "test", "path": role + "/taskNumber", "value": from},
		{"op": "replace", "path": role + "/taskNumber", "value": to},
		{"op": "replace", "path": role + "/frameworkAttemptCompletionPolicy/minSucceededTaskCount", "value": to},
	})
	return patch
}

// ReadElasticJob recovers the spec of an elastic job from its Framework (for import).
func ReadElasticJob(obj *unstructured.Unstructured) (ElasticJobSpec, error) {
	var f framework
	if err := fromUnstructured(obj, &f); err != nil {
		return ElasticJobSpec{}, err
	}
	spec := ElasticJobSpec{Name: f.Name, Namespace: f.Namespace}
	var etcd, worker *taskRoleSpec
	for _, r := range f.Spec.TaskRoles {
		switch {
		case r == nil:
		case r.Name == EtcdRole:
			etcd = r
		case r.Name == WorkerRole:
			worker = r
		}
	}
	if etcd == nil || worker == nil {
		return spec, fmt.Errorf("framework %s/%s has no %q and %q task roles: it is not an elastic job", f.Namespace, f.Name, EtcdRole, WorkerRole)
	}
	spec.Pod = readPodOptions(worker.Task.Pod)
	spec.Pod.MountShm = false // always mounted for elastic jobs; not an input
	raw, ok := f.Annotations[ElasticInputsAnnotation]
	if !ok {
		if err := readElasticCommand(&spec, worker); err != nil {
			return spec, fmt.Errorf("framework %s/%s: %w", f.Namespace, f.Name, err)
		}
	} else {
		var in elasticInputs
		if err := json.Unmarshal([]byte(raw), &in); err != nil {
			return spec, fmt.Errorf("framework %s/%s: annotation %s: %w", f.Namespace, f.Name, ElasticInputsAnnotation, err)
		}
		spec.Launcher, spec.Script, spec.ScriptArgs, spec.Command = in.Launcher, in.Script, in.ScriptArgs, in.Command
		if spec.Launcher == "" && spec.Script != "" {
			spec.Launcher = LauncherTorchelastic // made before the launcher was a choice
		}
		spec.MinWorkers, spec.MaxWorkers, spec.ProcsPerNode, spec.EtcdNetworkPolicy = in.MinWorkers, in.MaxWorkers, in.ProcsPerNode, in.EtcdNetworkPolicy
	}
	spec.Pod.Labels, _ = userLabels(f.Labels)
	spec.Pod.Annotations = userAnnotations(f.Annotations)
	spec.Workers = worker.TaskNumber
	spec.MaxRetryCount = worker.Task.RetryPolicy.MaxRetryCount
	spec.PodGracefulDeletionTimeout = ptr.Deref(worker.Task.PodGracefulDeletionTimeoutSec, DefaultPodGracefulDeletionTimeout)
	etcdPod := readPodOptions(etcd.Task.Pod)
	spec.EtcdImage, spec.EtcdCPU, spec.EtcdMemory = etcdPod.Image, etcdPod.CPU, etcdPod.Memory
	// The annotation says what the command was made from; a command edited since (kubectl
	// edit) is what the workers run, and is read as such, so that a refresh shows the change.
	if !ok {
		return spec, nil
	}
	if containers := worker.Task.Pod.Spec.Containers; len(containers) > 0 &&
		!slices.Equal(containers[0].Command, spec.workerCommand()) && !slices.Equal(containers[0].Command, spec.legacyWorkerCommand()) {
		spec.Command, spec.Script, spec.ScriptArgs = containers[0].Command, "", nil
	}
	return spec, nil
}

// readElasticCommand reads the inputs of an elastic job that another tool made (a Framework
// without this provider's record of its inputs, such as FrameworkController's example written
// by hand): the workers' command as it is, the bounds of their count from the launcher's
// --nnodes=MIN:MAX and the processes per worker from its --nproc_per_node, wherever in the
// command they are (the example's is one sh -c line). A command that says no --nnodes bounds the
// workers to the count they have (a fixed-size job: changing it replaces the job); one that says
// no number of processes per worker has the default, the GPUs per worker, at least 1.
func readElasticCommand(spec *ElasticJobSpec, worker *taskRoleSpec) error {
	containers := worker.Task.Pod.Spec.Containers
	if len(containers) == 0 || len(containers[0].Command) == 0 {
		return fmt.Errorf("its workers' container sets no command (it runs its image's entrypoint), which training_elastic_job cannot say")
	}
	spec.Command = append(slices.Clone(containers[0].Command), containers[0].Args...)
	line := strings.Join(spec.Command, " ")
	spec.MinWorkers, spec.MaxWorkers = worker.TaskNumber, worker.TaskNumber
	if m := nnodesFlag.FindStringSubmatch(line); m != nil {
		low, _ := strconv.ParseInt(m[1], 10, 32)
		high := low
		if m[2] != "" {
			high, _ = strconv.ParseInt(m[2], 10, 32)
		}
		spec.MinWorkers, spec.MaxWorkers = int32(low), int32(high)
	}
	spec.ProcsPerNode = int32(max(1, spec.Pod.GPUs))
	if m := nprocFlag.FindStringSubmatch(line); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 32)
		spec.ProcsPerNode = int32(n)
	}
	return nil
}

// The launchers' flags that bound an elastic job's workers and set its processes per worker,
// in either spelling torchrun accepts (--nproc_per_node, --nproc-per-node) and either form
// (--flag=VALUE, --flag VALUE).
var (
	nnodesFlag = regexp.MustCompile(`(?:^|\s)--nnodes[=\s]+(\d{1,9})(?::(\d{1,9}))?(?:\s|$)`)
	nprocFlag  = regexp.MustCompile(`(?:^|\s)--nproc[_-]per[_-]node[=\s]+(\d{1,9})(?:\s|$)`)
)

// elasticWorkers returns the worker taskNumber of a Framework object.
func elasticWorkers(obj *unstructured.Unstructured) (int32, error) {
	var f framework
	if err := fromUnstructured(obj, &f); err != nil {
		return 0, err
	}
	for _, r := range f.Spec.TaskRoles {
		if r != nil && r.Name == WorkerRole {
			return r.TaskNumber, nil
		}
	}
	return 0, fmt.Errorf("framework %s/%s has no %q task role", obj.GetNamespace(), obj.GetName(), WorkerRole)
}

// frameworkStatus mirrors the parts of FrameworkStatus the status mapping reads.
type frameworkStatus struct {
	Status *struct {
		StartTime      *metav1.Time `json:"startTime"`
		CompletionTime *metav1.Time `json:"completionTime"`
		State          string       `json:"state"`
		// TotalRetriedCount > 0 means an attempt before this one ran.
		RetryPolicyStatus struct {
			TotalRetriedCount int32 `json:"totalRetriedCount"`
		} `json:"retryPolicyStatus"`
		AttemptStatus struct {
			CompletionStatus *struct {
				Diagnostics string `json:"diagnostics"`
				Type        struct {
					Name string `json:"name"`
				} `json:"type"`
			} `json:"completionStatus"`
			TaskRoleStatuses []struct {
				Name         string `json:"name"`
				TaskStatuses []struct {
					Index         int32        `json:"index"`
					State         string       `json:"state"`
					StartTime     *metav1.Time `json:"startTime"`
					AttemptStatus struct {
						PodName     string  `json:"podName"`
						PodNodeName *string `json:"podNodeName"`
					} `json:"attemptStatus"`
				} `json:"taskStatuses"`
			} `json:"taskRoleStatuses"`
		} `json:"attemptStatus"`
	} `json:"status"`
}

// readFrameworkStatus maps a Framework's state to the job phases, and its task statuses to the
// instances (role, index, task state, pod, node).
func readFrameworkStatus(obj *unstructured.Unstructured, now time.Time) (Status, error) {
	var f frameworkStatus
	if err := fromUnstructured(obj, &f); err != nil {
		return Status{}, err
	}
	s := Status{Phase: Pending, Instances: []Instance{}}
	if f.Status == nil {
		return s, nil
	}
	st := f.Status
	switch st.State {
	case "AttemptRunning":
		s.Phase = Running
	case "AttemptDeletionPending", "AttemptDeletionRequested", "AttemptDeleting", "AttemptCompleted":
		// An attempt ended and the framework is being retried: still running, as `arena get`
		// shows a restarting job.
		s.Phase = Running
	case "Completed":
		s.Phase = Failed
		if cs := st.AttemptStatus.CompletionStatus; cs != nil && cs.Type.Name == "Succeeded" {
			s.Phase = Succeeded
		}
	default:
		// A new attempt being created is a restart once the first attempt has been.
		if st.RetryPolicyStatus.TotalRetriedCount > 0 {
			s.Phase = Running
		}
	}
	if st.StartTime != nil {
		s.StartTime = &st.StartTime.Time
	}
	if st.CompletionTime != nil {
		s.CompletionTime = &st.CompletionTime.Time
	}
	s.Duration = trainingDuration(s.StartTime, s.CompletionTime, now)
	for _, role := range st.AttemptStatus.TaskRoleStatuses {
		for _, task := range role.TaskStatuses {
			in := Instance{
				Name:  task.AttemptStatus.PodName,
				Role:  role.Name,
				Index: task.Index,
				Phase: task.State,
				Node:  ptr.Deref(task.AttemptStatus.PodNodeName, ""),
			}
			if task.StartTime != nil {
				in.Created = task.StartTime.Time
			}
			s.Instances = append(s.Instances, in)
		}
	}
	return s, nil
}

// frameworkFailure returns why a Framework failed, or "".
func frameworkFailure(obj *unstructured.Unstructured) string {
	var f frameworkStatus
	if obj == nil || fromUnstructured(obj, &f) != nil || f.Status == nil || f.Status.State != "Completed" {
		return ""
	}
	if cs := f.Status.AttemptStatus.CompletionStatus; cs != nil && cs.Type.Name != "Succeeded" {
		return fmt.Sprintf("the job failed: %s: %s", cs.Type.Name, cs.Diagnostics)
	}
	return ""
}
