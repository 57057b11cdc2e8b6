package jobs

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is everything the provider needs to know about one kind of training job, apart from how
// its spec becomes objects (a Spec's Build): its API, how to find its pods and their roles, how
// to read its status, its worker count and how to change it. Each kind is one value, registered
// in Kinds; the training_job data source and the provider's description read the registry, and a
// test checks every other site (resource, example, template, docs page, RBAC rule) against it.
type Kind struct {
	// Name is the kind in configurations: the training_job data source's `kind`, and the
	// resource training_NAME_job.
	Name string
	// Object is the Kubernetes kind of the job object, e.g. "MPIJob".
	Object string
	GVR    schema.GroupVersionResource
	// RoleLabel is the pod label holding each pod's role in the job.
	RoleLabel string
	// Operator is what runs the job, for messages and docs.
	Operator string
	// InstancesFromObject: the job object lists its tasks and their pods and nodes (a
	// Framework), so a refresh reads the object alone; otherwise the instances are its pods.
	InstancesFromObject bool
	// OperatorDrops says what its operator leaves out of the pods it makes of a job's templates
	// (Roles leaves it out too); "" when it keeps them whole.
	OperatorDrops string
	// LiveRunPolicy are the run-policy fields its operator honours when they change on a
	// running job; none for a kind without a Kubeflow run policy.
	LiveRunPolicy RunPolicyFields
	// Owns are the resources of the objects its operator makes for a job and owns, besides
	// pods (and what those own in turn). A job is deleted in the background: the object goes at
	// once and the garbage collector removes what it owned, in parallel rather than a chain
	// that holds the job until the last of them is gone (under foreground deletion, 5 to 9 s a
	// job on the local cluster). Destroy waits until every object of these resources the job
	// owned, directly or through another, is gone with its pods, so that a job made again
	// under the name never meets its predecessor's Services, ConfigMaps or launcher.
	// (Trainer v2.3.0 must delete in the background anyway: it reconciles a TrainJob being
	// deleted, and under foreground deletion makes again each JobSet the collector deletes.)
	Owns []schema.GroupVersionResource

	// The capabilities every kind has (check says which one a kind lacks).
	podSelector   func(job string) string
	status        func(o Observed, now time.Time) (Status, error)
	failure       func(o Observed) string
	workers       func(obj *unstructured.Unstructured) (int32, error)
	priorityClass func(obj *unstructured.Unstructured) string
	// roles are the pods of each role of a job object as Build made it, as its operator makes
	// them (see OperatorDrops); runtime is the
	// TrainingRuntime of a kind whose pods are its runtime's (nil for every other).
	roles func(obj, runtime *unstructured.Unstructured) ([]RolePods, error)

	// Optional: templates are the pod templates of a job object's roles, by role, as the
	// object's own maps (changing one changes the object), and patchRoles the roles a pod_patch
	// may name; a kind without them takes no pod_patch (a TrainJob: its pods are its
	// runtime's, which Trainer patches with a few fields only).
	templates  func(obj *unstructured.Unstructured) map[string]map[string]any
	patchRoles []string
	// suspended says whether the job object asks its operator to hold its pods back (a kind
	// without a suspend says false); suspendField is that field's path, nil for a kind without
	// one (restart.go).
	suspended    func(obj *unstructured.Unstructured) bool
	suspendField []string

	// What a change does (Compare): live are the fields of the job object, as dotted paths,
	// that its operator reads while the job runs, so that a change to them applies to the
	// running job (besides the user's labels and annotations, which every kind keeps live);
	// stop is how its pods stop ("": StopSignal).
	live []string
	stop Stop

	// The capabilities a kind may lack, and is then without by construction.
	// rescale is the guarded JSON patch of a job rescaled in place; nil for a kind whose API
	// never changes a running job's count (it is replaced instead). rescalesInPlace says
	// whether the program of a job of spec s takes a new count while it runs; nil for a kind
	// that never does.
	rescale         func(from, to int32) []byte
	rescalesInPlace func(s Spec) bool
	// dependents are the objects a job of that name may own besides its operator's.
	dependents func(job string) []Dependent
	// specDefaults are the values the API server (the CRD's defaults) or the operator writes into a
	// stored job's spec outside its pod templates, by path (spec.FIELD): a live job holding one is
	// not holding something its resource cannot say (Unexpressed).
	specDefaults map[string]any
}

// register is the only way a kind comes in: it checks that each kind has what every kind needs,
// so that a kind registered without one fails every binary of the provider, its tests' included,
// as it starts, not in a user's apply.
func register(kinds ...*Kind) []*Kind {
	for _, k := range kinds {
		if err := k.check(); err != nil {
			panic(err)
		}
	}
	return kinds
}

// check says which of the facts and capabilities every kind needs k lacks, or nil.
func (k *Kind) check() error {
	var missing []string
	for _, c := range []struct {
		name   string
		absent bool
	}{
		{"Name", k.Name == ""}, {"Object", k.Object == ""}, {"GVR", k.GVR.Resource == "" || k.GVR.Version == ""},
		{"RoleLabel", k.RoleLabel == ""}, {"Operator", k.Operator == ""},
		{"podSelector", k.podSelector == nil}, {"status", k.status == nil}, {"failure", k.failure == nil},
		{"workers", k.workers == nil}, {"priorityClass", k.priorityClass == nil}, {"roles", k.roles == nil}, {"patchRoles (it has templates)", k.templates != nil && len(k.patchRoles) == 0},
		{"suspended", k.suspended == nil}, {"rescale (it rescales in place)", k.rescalesInPlace != nil && k.rescale == nil},
	} {
		if c.absent {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("job kind %q (%s) is registered without %s", k.Name, k.Object, strings.Join(missing, ", "))
	}
	return nil
}

// Dependent names an object a job owns besides its operator's: made before the job and handed
// to it as its owner, deleted with it.
type Dependent struct {
	GVR  schema.GroupVersionResource
	Kind string
	Name string
	// Role is, for a Service, the role of the job's pods it selects.
	Role string
}

// String is how the dependents attribute lists it: KIND/NAME.
func (d Dependent) String() string { return d.Kind + "/" + d.Name }

// dependentGVRs are the kinds of object a job may own besides its operator's, and their APIs.
var dependentGVRs = map[string]schema.GroupVersionResource{"Service": ServiceGVR, "NetworkPolicy": NetworkPolicyGVR}

// newDependent names the dependent of that kind and name; a Service names the role it selects.
func newDependent(kind, name, role string) Dependent {
	return Dependent{GVR: dependentGVRs[kind], Kind: kind, Name: name, Role: role}
}

// DependentOf names a dependent object that Build returned, a Service with the role its
// selector picks (by the kind's role label).
func (k *Kind) DependentOf(obj *unstructured.Unstructured) (Dependent, error) {
	if _, ok := dependentGVRs[obj.GetKind()]; !ok {
		return Dependent{}, fmt.Errorf("a job's dependent cannot be a %s", obj.GetKind())
	}
	role := ""
	if obj.GetKind() == "Service" {
		role, _, _ = unstructured.NestedString(obj.Object, "spec", "selector", k.RoleLabel)
	}
	return newDependent(obj.GetKind(), obj.GetName(), role), nil
}

// MadeFor says whether obj, found under the name of one of a job's dependents and neither owned
// by the job nor made by this provider, serves that job and nothing else: a Service whose
// selector is exactly the one Build gives it, the job's pods of the dependent's role. The
// Services written by hand after FrameworkController's example are such: they are the job's,
// listed among its dependents and deleted with it.
func (k *Kind) MadeFor(job string, d Dependent, obj *unstructured.Unstructured) bool {
	if d.Kind != "Service" || d.Role == "" || obj.GetKind() != "Service" || obj.GetName() != d.Name {
		return false
	}
	want, err := labels.ConvertSelectorToLabelsMap(k.PodSelector(job))
	if err != nil {
		return false
	}
	want[k.RoleLabel] = d.Role
	selector, found, err := unstructured.NestedStringMap(obj.Object, "spec", "selector")
	return found && err == nil && maps.Equal(selector, map[string]string(want))
}

// Spec is what a job resource says, for any kind: it builds the job object and the objects it
// owns, and says how many pods of each role a running job has.
type Spec interface {
	Kind() *Kind
	// Build returns the job object and its dependents: objects created before the job and
	// handed to it as their owner once it exists.
	Build() (job *unstructured.Unstructured, dependents []*unstructured.Unstructured, err error)
	// Expect is the number of pods of each role (by the kind's RoleLabel) of the running job.
	Expect() map[string]int
	// Pods are the pod options of the job's workers, which its companions (a TensorBoard) follow.
	Pods() PodOptions
	// WithWorkers is the spec with n workers (a TrainJob's nodes) and nothing else changed.
	WithWorkers(n int32) Spec
}

// registry is every kind of job the provider manages, in the order the docs list them.
//
// Adding a job kind: a file of its own with its Spec (what its resource says, Build) and its
// reader, and the Kind value with every capability check asks for, registered here; then, in
// internal/provider, its resource (a model and newXJobResource, added to jobResources), an
// example and an import example under examples/resources, a template under templates/resources,
// the RBAC rule for its API in the ClusterRole of templates/index.md.tmpl, and a line in the
// index's list of resources. TestEveryKindIsComplete (here) and TestEveryJobKindIsComplete
// (internal/provider) fail, naming what is missing, until each of those is there.
var registry = register(MPI, TF, PyTorch, Elastic, Train)

// Kinds lists every kind of job the provider manages.
func Kinds() []*Kind { return slices.Clone(registry) }

// KindByName returns the registered kind of that name, or nil.
func KindByName(name string) *Kind {
	for _, k := range Kinds() {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// PodSelector selects the pods of the job of that name, and only them.
func (k *Kind) PodSelector(job string) string { return k.podSelector(job) }

// Status reads the job's status like `arena get`; now is only used for the running duration.
// A queued job that Kueue has not admitted is QUEUED (see withQueue).
func (k *Kind) Status(o Observed, now time.Time) (Status, error) {
	s, err := k.status(o, now)
	if err != nil {
		return s, err
	}
	return withQueue(s, o, k.Suspended(o.Object)), nil
}

// Failure says why the job failed or its operator refused it, or "".
func (k *Kind) Failure(o Observed) string { return k.failure(o) }

// Workers reads the job object's worker count.
func (k *Kind) Workers(obj *unstructured.Unstructured) (int32, error) { return k.workers(obj) }

// Rescalable says whether a job of the kind can change its worker count while it runs (when its
// spec says its program takes it: Compare); a change of the count replaces a job of a kind that
// cannot.
func (k *Kind) Rescalable() bool { return k.rescalesInPlace != nil }

// RescalePatch is a JSON patch from one worker count to another, guarded by a test of the count
// Terraform read: if someone else changed it since, the API server refuses the patch instead of
// silently overwriting their change. It is nil for a kind that is not Rescalable.
func (k *Kind) RescalePatch(from, to int32) []byte {
	if k.rescale == nil {
		return nil
	}
	return k.rescale(from, to)
}

// Roles are the pods of each role of a job object as Build made it, sorted by role: a Kubeflow
// job's replica specs (the role in lower case, as its pods' role label says it), a Framework's
// task roles, a TrainJob's replicated jobs on its runtime (which only such a kind needs).
func (k *Kind) Roles(obj, runtime *unstructured.Unstructured) ([]RolePods, error) {
	roles, err := k.roles(obj, runtime)
	sort.Slice(roles, func(i, j int) bool { return roles[i].Role < roles[j].Role })
	return roles, err
}

// Suspended says whether the job object asks its operator to hold its pods back: set by its
// owner, or by Kueue while the job waits in a queue.
func (k *Kind) Suspended(obj *unstructured.Unstructured) bool { return obj != nil && k.suspended(obj) }

// Dependents are the objects a job of that name may own besides its operator's: every one its
// Spec's Build can return (a Spec returns those its options ask for).
func (k *Kind) Dependents(job string) []Dependent {
	if k.dependents == nil {
		return nil
	}
	return k.dependents(job)
}

// PriorityClass is the workers' PriorityClass, as `arena get` shows its PRIORITY, or "".
func (k *Kind) PriorityClass(obj *unstructured.Unstructured) string { return k.priorityClass(obj) }
