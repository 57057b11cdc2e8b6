package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// The Kubeflow family: MPIJob (mpi-operator), TFJob and PyTorchJob (training-operator) share
// their pod labels, run policy, replica specs and status.
const (
	// JobNameLabel and OperatorNameLabel are on every pod of a Kubeflow job: the job's name and
	// the controller that made it, so that an MPIJob and a TFJob named alike never share pods.
	JobNameLabel      = "training.kubeflow.org/job-name"
	OperatorNameLabel = "training.kubeflow.org/operator-name"
	// JobRoleLabel is mpi-operator's pod role ("launcher", "worker"); ReplicaTypeLabel is
	// training-operator's ("worker", "ps", "chief", "master").
	JobRoleLabel     = "training.kubeflow.org/job-role"
	ReplicaTypeLabel = "training.kubeflow.org/replica-type"
	// replicaIndexLabel is each pod's index within its role.
	replicaIndexLabel = "training.kubeflow.org/replica-index"

	kubeflowWorker = "Worker"
)

// CleanPodPolicies are the Kubeflow run policy's clean pod policies.
var CleanPodPolicies = []string{"None", "Running", "All"}

// OperatorCleanPodPolicy is the clean pod policy of a job that sets none: both mpi-operator
// v0.8.2 (v2beta1 SetDefaults_MPIJob) and training-operator v1.9.0 (the TFJob and PyTorchJob
// defaulters) clean no pods. They apply it in memory, so the stored job keeps no value.
const OperatorCleanPodPolicy = "None"

// RunPolicy is what a Kubeflow job says besides its replicas: when its pods are cleaned up, how
// often and how long it may run, and the Kueue queue it is submitted to.
type RunPolicy struct {
	CleanPodPolicy          string
	TTLSecondsAfterFinished *int32
	BackoffLimit            *int32
	ActiveDeadlineSeconds   *int64
	QueueName               string
	// WorkloadPriorityClass is the Kueue WorkloadPriorityClass of the queued job
	// (PriorityClassLabel); "" none.
	WorkloadPriorityClass string
	// Suspend holds the job's pods back (the operator deletes them) until it is false again.
	Suspend bool
	// Scheduling is the gang-scheduling policy (runPolicy.schedulingPolicy); nil sets none.
	Scheduling *SchedulingPolicy
}

// SchedulingPolicy is a Kubeflow job's runPolicy.schedulingPolicy, the same in mpi-operator
// v0.8.2 and training-operator v1.9.0: what the operator puts in the PodGroup it makes for the
// job when it runs with a gang scheduler (Volcano, the scheduler-plugins' coscheduling), read when
// it makes that PodGroup. Its minResources is not expressed.
type SchedulingPolicy struct {
	MinAvailable           *int32 `json:"minAvailable,omitempty"`
	Queue                  string `json:"queue,omitempty"`
	PriorityClass          string `json:"priorityClass,omitempty"`
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// RunPolicyFields names run-policy fields: a kind's LiveRunPolicy are those its operator reads
// while the job runs, so that a change to them applies to the running job; a change to any
// other is only read when the job starts, and so replaces it.
type RunPolicyFields struct {
	CleanPodPolicy, TTLSecondsAfterFinished, BackoffLimit, ActiveDeadlineSeconds, Suspend bool
}

// paths are the fields of a job object that hold them.
func (f RunPolicyFields) paths() []string {
	var out []string
	for _, field := range []struct {
		live bool
		name string
	}{{f.CleanPodPolicy, "cleanPodPolicy"}, {f.TTLSecondsAfterFinished, "ttlSecondsAfterFinished"}, {f.BackoffLimit, "backoffLimit"},
		{f.ActiveDeadlineSeconds, "activeDeadlineSeconds"}, {f.Suspend, "suspend"}} {
		if field.live {
			out = append(out, "spec.runPolicy."+field.name)
		}
	}
	return out
}

// withChanges gives a kind how its jobs rescale and stop (Compare).
func withChanges(k *Kind, rescalesInPlace func(Spec) bool, stop Stop) *Kind {
	k.rescalesInPlace, k.stop = rescalesInPlace, stop
	return k
}

// always is a rescale that a kind's every job has.
func always(v bool) func(Spec) bool { return func(Spec) bool { return v } }

// runPolicy is the run policy as the API has it; the queue goes in a label.
type runPolicy struct {
	CleanPodPolicy          *string `json:"cleanPodPolicy,omitempty"`
	TTLSecondsAfterFinished *int32  `json:"ttlSecondsAfterFinished,omitempty"`
	ActiveDeadlineSeconds   *int64  `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit            *int32  `json:"backoffLimit,omitempty"`
	Suspend                 *bool   `json:"suspend,omitempty"`
	// SchedulingPolicy keeps what it does not express (minResources) for the read to see.
	SchedulingPolicy *SchedulingPolicy `json:"schedulingPolicy,omitempty"`
}

func (p RunPolicy) api() runPolicy {
	return runPolicy{
		CleanPodPolicy:          optional(p.CleanPodPolicy),
		TTLSecondsAfterFinished: p.TTLSecondsAfterFinished,
		ActiveDeadlineSeconds:   p.ActiveDeadlineSeconds,
		BackoffLimit:            p.BackoffLimit,
		Suspend:                 suspend(p.Suspend),
		SchedulingPolicy:        p.Scheduling,
	}
}

// suspend is written only when true: false is the API's default.
func suspend(b bool) *bool {
	if !b {
		return nil
	}
	return ptr.To(true)
}

// trainingOperatorLiveRunPolicy: training-operator v1.9 reads the whole run policy on every
// reconcile (deadline and backoff in its past-deadline and past-backoff checks, the TTL and
// clean pod policy when the job finishes, suspend at once).
var trainingOperatorLiveRunPolicy = RunPolicyFields{CleanPodPolicy: true, TTLSecondsAfterFinished: true, BackoffLimit: true,
	ActiveDeadlineSeconds: true, Suspend: true}

// readRunPolicy recovers the run policy from a job's runPolicy and queue: a clean pod policy
// left out is the operator's (OperatorCleanPodPolicy), which is what the job runs with; suspend
// is the owner's only (ownSuspend).
func readRunPolicy(p runPolicy, queue string) RunPolicy {
	return RunPolicy{
		CleanPodPolicy:          ptr.Deref(p.CleanPodPolicy, OperatorCleanPodPolicy),
		TTLSecondsAfterFinished: p.TTLSecondsAfterFinished,
		BackoffLimit:            p.BackoffLimit,
		ActiveDeadlineSeconds:   p.ActiveDeadlineSeconds,
		QueueName:               queue,
		Suspend:                 ownSuspend(queue, p.Suspend),
		Scheduling:              scheduling(p.SchedulingPolicy),
	}
}

// scheduling is a read scheduling policy; nil for one that says nothing this provider expresses
// (only minResources, which stays a gap).
func scheduling(p *SchedulingPolicy) *SchedulingPolicy {
	if p == nil || *p == (SchedulingPolicy{}) {
		return nil
	}
	return p
}

type replicaSpec struct {
	Replicas      *int32                 `json:"replicas,omitempty"`
	Template      corev1.PodTemplateSpec `json:"template,omitempty"`
	RestartPolicy string                 `json:"restartPolicy,omitempty"`
}

// kubeflowMeta is a Kubeflow job's metadata: the user's labels and annotations, this provider's
// label and the queue's.
func kubeflowMeta(name, namespace string, pod PodOptions, queue, priorityClass string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: jobLabels(pod.Labels, queue, priorityClass), Annotations: jobAnnotations(pod)}
}

// kubeflowWorkers is what every Kubeflow job's workers say: the pod options (with the job's
// labels and annotations, the user's only), the run policy, the count and the command.
type kubeflowWorkers struct {
	Pod       PodOptions
	RunPolicy RunPolicy
	Workers   int32
	Command   []string
}

// readKubeflowWorkers reads them back from a job's metadata, run policy and replica specs (for
// import); a job without a Worker replica spec is not one this provider made.
func readKubeflowWorkers(k *Kind, meta metav1.ObjectMeta, policy runPolicy, replicas map[string]*replicaSpec) (kubeflowWorkers, error) {
	worker := replicas[kubeflowWorker]
	if worker == nil {
		return kubeflowWorkers{}, fmt.Errorf("%s %s/%s has no %s replica spec", k.Object, meta.Namespace, meta.Name, kubeflowWorker)
	}
	w := kubeflowWorkers{Pod: readPodOptions(worker.Template), Workers: ptr.Deref(worker.Replicas, 1)}
	w.Pod.Spread = k.readSpread(worker.Template, meta.Name, WorkerRole)
	var queue, priorityClass string
	w.Pod.Labels, queue, priorityClass = userLabels(meta.Labels)
	w.Pod.Annotations = userAnnotations(meta.Annotations)
	w.Pod.Checkpoint = checkpointOf(meta.Annotations)
	withoutCheckpointEnv(&w.Pod)
	readSensitiveEnv(&w.Pod, meta.Labels, meta.Annotations)
	readWriteOnlyEnv(&w.Pod, meta.Name, meta.Annotations)
	w.RunPolicy = readRunPolicy(policy, queue)
	w.RunPolicy.WorkloadPriorityClass = priorityClass
	if len(worker.Template.Spec.Containers) > 0 {
		w.Command = worker.Template.Spec.Containers[0].Command
	}
	return w, nil
}

// jobStatus is the Kubeflow JobStatus, shared by MPIJob, TFJob and PyTorchJob.
type jobStatus struct {
	Conditions     []jobCondition `json:"conditions,omitempty"`
	StartTime      *metav1.Time   `json:"startTime,omitempty"`
	CompletionTime *metav1.Time   `json:"completionTime,omitempty"`
}

type jobCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// kubeflowKind describes a Kubeflow job kind: its API version and resource, the controller
// named on its pods, the pod label of their role, the field holding its replica specs, and what
// else the operator makes for a job.
func kubeflowKind(name, object, version, resource, operator, controller, roleLabel, replicaSpecs string, live RunPolicyFields, owns ...schema.GroupVersionResource) *Kind {
	workers := []string{"spec", replicaSpecs, kubeflowWorker}
	replicasPath := "/spec/" + replicaSpecs + "/" + kubeflowWorker + "/replicas"
	return &Kind{
		Name: name, Object: object, Operator: operator, RoleLabel: roleLabel, LiveRunPolicy: live, live: live.paths(),
		GVR: schema.GroupVersionResource{Group: "kubeflow.org", Version: version, Resource: resource}, Owns: owns,
		podSelector: func(job string) string {
			return JobNameLabel + "=" + job + "," + OperatorNameLabel + "=" + controller
		},
		status:  func(o Observed, now time.Time) (Status, error) { return kubeflowStatus(o, roleLabel, now) },
		failure: kubeflowFailure,
		workers: func(obj *unstructured.Unstructured) (int32, error) {
			n, found, err := unstructured.NestedInt64(obj.Object, append(workers, "replicas")...)
			if err != nil {
				return 0, fmt.Errorf("%s %s/%s: %w", object, obj.GetNamespace(), obj.GetName(), err)
			}
			if !found {
				if _, hasWorkers, _ := unstructured.NestedMap(obj.Object, workers...); !hasWorkers {
					return 0, fmt.Errorf("%s %s/%s has no %s replica spec", object, obj.GetNamespace(), obj.GetName(), kubeflowWorker)
				}
				return 1, nil // the CRD's default
			}
			return int32(n), nil
		},
		rescale: func(from, to int32) []byte {
			patch, _ := json.Marshal([]map[string]any{
				{"op": "test", "path": replicasPath, "value": from},
				{"op": "replace", "path": replicasPath, "value": to},
			})
			return patch
		},
		priorityClass: kubeflowPriorityClass(replicaSpecs, kubeflowWorker),
		roles:         func(obj, _ *unstructured.Unstructured) ([]RolePods, error) { return replicaRoles(obj, replicaSpecs) },
		templates: func(obj *unstructured.Unstructured) map[string]map[string]any {
			return replicaTemplates(obj, replicaSpecs)
		},
		// The CRDs of mpi-operator v0.8.2 and training-operator v1.9.0 default it.
		specDefaults: map[string]any{"spec.runPolicy.suspend": false},
		suspended: func(obj *unstructured.Unstructured) bool {
			suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "runPolicy", "suspend")
			return suspended
		},
		suspendField: []string{"spec", "runPolicy", "suspend"},
	}
}

// kubeflowStatus reads the status of a Kubeflow job and its pods; roleLabel names the pod label
// holding each pod's role.
func kubeflowStatus(o Observed, roleLabel string, now time.Time) (Status, error) {
	var job struct {
		Status jobStatus `json:"status"`
	}
	if err := fromUnstructured(o.Object, &job); err != nil {
		return Status{}, err
	}
	s := Status{Phase: Pending, Instances: instances(o.Pods, roleLabel)}
	conditions := map[string]bool{}
	for _, c := range job.Status.Conditions {
		conditions[c.Type] = c.Status == string(corev1.ConditionTrue)
	}
	switch {
	case conditions["Succeeded"]:
		s.Phase = Succeeded
	case conditions["Failed"]:
		s.Phase = Failed
	case conditions["Suspended"]:
		s.Phase = Suspended
	case conditions["Running"], conditions["Restarting"]:
		// A restarting job (a replica failed and is being retried) is still running its
		// training, as `arena get` shows it.
		s.Phase = Running
	}
	if t := job.Status.StartTime; t != nil {
		s.StartTime = &t.Time
	}
	if t := job.Status.CompletionTime; t != nil {
		s.CompletionTime = &t.Time
	}
	s.Duration = trainingDuration(s.StartTime, s.CompletionTime, now)
	return s, nil
}

// fatalEventReasons are the Warning events after which an operator will not go on by itself:
// mpi-operator reports an invalid spec only as a ValidationError event. (Its ErrResourceExists
// is not one: it retries, and a dependant of an earlier job of the same name that the garbage
// collector has not removed yet is gone soon after.)
var fatalEventReasons = map[string]bool{"ValidationError": true}

// kubeflowFailure returns why a Kubeflow job failed or was refused by its operator, or "".
func kubeflowFailure(o Observed) string {
	if o.Object != nil {
		conditions, _, _ := unstructured.NestedSlice(o.Object.Object, "status", "conditions")
		for _, c := range conditions {
			m, _ := c.(map[string]any)
			if m["type"] == "Failed" && m["status"] == "True" {
				return fmt.Sprintf("the job failed: %v: %v", m["reason"], m["message"])
			}
		}
	}
	for _, e := range o.Events {
		if e.Type != corev1.EventTypeWarning || !aboutThisObject(e, o.Object) {
			continue
		}
		if fatalEventReasons[e.Reason] {
			return fmt.Sprintf("the operator refused the job: %s: %s", e.Reason, e.Message)
		}
		if strings.Contains(e.Message, podSecurityRefusal) {
			// The operator retries, and the API server refuses again until the namespace's
			// labels or the job change.
			return fmt.Sprintf("the API server refused the job's pods: %s: %s", e.Reason, e.Message)
		}
	}
	return ""
}

// podSecurityRefusal is in the API server's error when Pod Security admission refuses a pod,
// which the Kubeflow operators pass on in a Warning event about the job.
const podSecurityRefusal = "violates PodSecurity"

// aboutThisObject says whether an event is about obj itself, not about an earlier object of the
// same name (events outlive their object by about an hour).
func aboutThisObject(e corev1.Event, obj *unstructured.Unstructured) bool {
	return obj == nil || e.InvolvedObject.UID == "" || e.InvolvedObject.UID == obj.GetUID()
}

// withSpecDefaults adds to a kind the defaults its API writes into a stored job's spec.
func withSpecDefaults(k *Kind, defaults map[string]any) *Kind {
	for path, value := range defaults {
		k.specDefaults[path] = value
	}
	return k
}

// replicaTemplates are the pod templates of a Kubeflow job object's replica specs under field,
// by role (the replica type in lower case), as the object's own maps.
func replicaTemplates(obj *unstructured.Unstructured, field string) map[string]map[string]any {
	out := map[string]map[string]any{}
	spec, _ := obj.Object["spec"].(map[string]any)
	byType, _ := spec[field].(map[string]any)
	for replicaType, rs := range byType {
		m, _ := rs.(map[string]any)
		if t, ok := m["template"].(map[string]any); ok {
			out[strings.ToLower(replicaType)] = t
		}
	}
	return out
}

// kubeflowPriorityClass is the PriorityClass Kueue v0.19.2 gives a Kubeflow job's Workload
// (pkg/controller/jobs/kubeflow/kubeflowjob's PriorityClass): the run policy's scheduling
// policy's, else that of the first replica spec, in Kueue's order of the kind's replica types,
// whose pods name one.
func kubeflowPriorityClass(replicaSpecs string, order ...string) func(*unstructured.Unstructured) string {
	return func(obj *unstructured.Unstructured) string {
		if s, _, _ := unstructured.NestedString(obj.Object, "spec", "runPolicy", "schedulingPolicy", "priorityClass"); s != "" {
			return s
		}
		for _, replicaType := range order {
			if s, _, _ := unstructured.NestedString(obj.Object, "spec", replicaSpecs, replicaType, "template", "spec", "priorityClassName"); s != "" {
				return s
			}
		}
		return ""
	}
}

// withPriorityOrder gives a Kubeflow kind Kueue's order of its replica types for the priority
// class of its Workload (kubeflowPriorityClass).
func withPriorityOrder(k *Kind, replicaSpecs string, order ...string) *Kind {
	k.priorityClass = kubeflowPriorityClass(replicaSpecs, order...)
	return k
}

// withPatchRoles gives a kind the roles its pod_patch and roles may name.
func withPatchRoles(k *Kind, roles ...string) *Kind {
	k.patchRoles = roles
	return k
}
