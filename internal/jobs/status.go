package jobs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Job phases, as `arena get` shows them.
const (
	Pending   = "PENDING"
	Running   = "RUNNING"
	Succeeded = "SUCCEEDED"
	Failed    = "FAILED"
	Suspended = "SUSPENDED"
)

// Finished says whether a job in this phase will not run again by itself.
func Finished(phase string) bool { return phase == Succeeded || phase == Failed }

// Observed is what a wait or a read sees of one job: its object, its pods and the events about it.
type Observed struct {
	Object *unstructured.Unstructured
	Pods   []corev1.Pod
	Events []corev1.Event
}

// Status is a job's state like `arena get` shows it.
type Status struct {
	Phase          string
	StartTime      *time.Time
	CompletionTime *time.Time
	// Duration is the training time: from start to completion, or to now while it runs.
	Duration  time.Duration
	Instances []Instance
}

// Instance is one pod of a job.
type Instance struct {
	Name  string
	Role  string
	Index int32
	// Phase is the pod's phase, or for an elastic job its task's state.
	Phase string
	Node  string
	// Created is when the pod (or the task) was created, for `arena get`'s AGE.
	Created time.Time
}

// kubeflowIndexLabel is the replica index the Kubeflow operators put on each pod.
const kubeflowIndexLabel = "training.kubeflow.org/replica-index"

// KubeflowStatus reads the status of a Kubeflow job (MPIJob, TFJob, PyTorchJob: they share the
// JobStatus type) and its pods; roleLabel names the pod label holding each pod's role.
func KubeflowStatus(o Observed, roleLabel string, now time.Time) (Status, error) {
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

func trainingDuration(start, end *time.Time, now time.Time) time.Duration {
	if start == nil {
		return 0
	}
	if end == nil {
		end = &now
	}
	if d := end.Sub(*start); d > 0 {
		return d.Round(time.Second)
	}
	return 0
}

// instances lists the pods, the launcher (or master) first, then by role and name.
func instances(pods []corev1.Pod, roleLabel string) []Instance {
	out := make([]Instance, 0, len(pods))
	for _, p := range pods {
		index, _ := strconv.ParseInt(p.Labels[kubeflowIndexLabel], 10, 32)
		out = append(out, Instance{Name: p.Name, Role: p.Labels[roleLabel], Index: int32(index), Phase: string(p.Status.Phase),
			Node: p.Spec.NodeName, Created: p.CreationTimestamp.Time})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Role != out[j].Role {
			return out[i].Role < out[j].Role
		}
		if out[i].Index != out[j].Index {
			return out[i].Index < out[j].Index
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// fatalEventReasons are the Warning events after which an operator will not go on by itself:
// mpi-operator reports an invalid spec only as a ValidationError event. (Its ErrResourceExists
// is not one: it retries, and a dependant of an earlier job of the same name that the garbage
// collector has not removed yet is gone soon after.)
var fatalEventReasons = map[string]bool{"ValidationError": true}

// aboutThisObject says whether an event is about obj itself, not about an earlier object of the
// same name (events outlive their object by about an hour).
func aboutThisObject(e corev1.Event, obj *unstructured.Unstructured) bool {
	return obj == nil || e.InvolvedObject.UID == "" || e.InvolvedObject.UID == obj.GetUID()
}

// KubeflowFailure returns why a Kubeflow job failed or was refused by its operator, or "".
func KubeflowFailure(o Observed) string {
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
		if e.Type == corev1.EventTypeWarning && fatalEventReasons[e.Reason] && aboutThisObject(e, o.Object) {
			return fmt.Sprintf("the operator refused the job: %s: %s", e.Reason, e.Message)
		}
	}
	return ""
}

// RunningCount counts the pods of a role that are Running and not being deleted.
func RunningCount(pods []corev1.Pod, roleLabel, role string) (running, total int) {
	for _, p := range pods {
		if p.Labels[roleLabel] != role || p.DeletionTimestamp != nil {
			continue
		}
		total++
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	return running, total
}

// MPIJobRunning says whether an MPIJob runs with exactly workers workers: mpi-operator reports
// it Running, its launcher and that many worker pods are Running, and no other worker pod is
// left. A job that finished before the wait saw it run counts as having run. It returns an error
// when the job has failed or was refused, so waits fail fast.
func MPIJobRunning(o Observed, workers int32) (bool, error) {
	if reason := KubeflowFailure(o); reason != "" {
		return false, fmt.Errorf("%s", reason)
	}
	if o.Object == nil {
		return false, nil
	}
	if o.Object.GetDeletionTimestamp() != nil {
		return false, fmt.Errorf("the MPIJob is being deleted")
	}
	status, err := KubeflowStatus(o, MPIJobRoleLabel, time.Now())
	if err != nil {
		return false, err
	}
	if status.Phase == Succeeded {
		return true, nil
	}
	launchers, _ := RunningCount(o.Pods, MPIJobRoleLabel, "launcher")
	running, total := RunningCount(o.Pods, MPIJobRoleLabel, "worker")
	return status.Phase == Running && launchers == 1 && running == int(workers) && total == int(workers), nil
}

// WhyNotRunning explains from the pods and events why a job is not running yet: the scheduler's
// messages (untolerated taints, insufficient GPUs), waiting containers and Warning events.
func WhyNotRunning(o Observed) string {
	var reasons []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			reasons = append(reasons, s)
		}
	}
	for _, p := range o.Pods {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				add(fmt.Sprintf("pod %s is not scheduled: %s", p.Name, c.Message))
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason != "" {
				add(fmt.Sprintf("pod %s container %s is waiting: %s %s", p.Name, cs.Name, w.Reason, w.Message))
			}
		}
	}
	for _, e := range o.Events {
		if e.Type == corev1.EventTypeWarning && aboutThisObject(e, o.Object) {
			add(fmt.Sprintf("%s: %s", e.Reason, e.Message))
		}
	}
	if len(o.Pods) == 0 {
		add("no pod has been created yet")
	}
	return strings.Join(reasons, "; ")
}

// WorkerPriorityClass returns the PriorityClass of a job's workers, as `arena get` shows its
// PRIORITY, or "" when they have none. It reads MPIJobs, TFJobs and Frameworks.
func WorkerPriorityClass(obj *unstructured.Unstructured) string {
	var path []string
	switch obj.GetKind() {
	case "MPIJob":
		path = []string{"spec", "mpiReplicaSpecs", mpiWorker, "template", "spec", "priorityClassName"}
	case "TFJob":
		path = []string{"spec", "tfReplicaSpecs", tfWorker, "template", "spec", "priorityClassName"}
	case "Framework":
		roles, _, _ := unstructured.NestedSlice(obj.Object, "spec", "taskRoles")
		for _, r := range roles {
			if m, ok := r.(map[string]any); ok && m["name"] == WorkerRole {
				s, _, _ := unstructured.NestedString(m, "task", "pod", "spec", "priorityClassName")
				return s
			}
		}
		return ""
	}
	s, _, _ := unstructured.NestedString(obj.Object, path...)
	return s
}
