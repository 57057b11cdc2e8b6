package jobs

import (
	"cmp"
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
	// Queued: see queue.go.
)

// Phases are every phase a job's status can read, in the order a job goes through them.
var Phases = []string{Pending, Queued, Suspended, Running, Succeeded, Failed}

// Finished says whether a job in this phase will not run again by itself.
func Finished(phase string) bool { return phase == Succeeded || phase == Failed }

// Observed is what a wait or a read sees of one job: its object, its pods and the events about it.
type Observed struct {
	Object *unstructured.Unstructured
	Pods   []corev1.Pod
	Events []corev1.Event
	// Workload is Kueue's Workload of a queued job (one with QueueLabel), nil otherwise or
	// before Kueue has made it.
	Workload *unstructured.Unstructured
	// Owned names what the job object still owns of the resources its kind Owns, directly or
	// through one another, as "resource/name" (read only by destroy's wait).
	Owned []string
}

// Status is a job's state like `arena get` shows it.
type Status struct {
	Phase          string
	StartTime      *time.Time
	CompletionTime *time.Time
	// Duration is the training time: from start to completion, or to now while it runs.
	Duration  time.Duration
	Instances []Instance
	// QueueReason says why Kueue has not admitted a QUEUED job.
	QueueReason string
	// Cluster is the MultiKueue worker cluster the job was dispatched to, where its pods run;
	// empty for a job that runs in the cluster it was created in.
	Cluster string
	// Accelerators are the GPUs (or other accelerators) the job's pods hold: its caller's to set
	// (Kind.Accelerators reads them from a whole job object; a wait's holds no pod templates).
	Accelerators int64
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
		index, _ := strconv.ParseInt(cmp.Or(p.Labels[replicaIndexLabel], p.Labels[jobCompletionIndexLabel]), 10, 32)
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

// RunningCount counts the pods of a role that are Running and not being deleted, and all the
// role's pods there are, those being deleted included: a removed pod counts until it is gone.
func RunningCount(pods []corev1.Pod, roleLabel, role string) (running, total int) {
	for _, p := range pods {
		if p.Labels[roleLabel] != role {
			continue
		}
		total++
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
	}
	return running, total
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
	if q := QueueName(o.Object); q != "" && !Admitted(o) {
		add("queued in LocalQueue " + q + ", not admitted by Kueue: " + withQueue(Status{Phase: Pending}, o, false).QueueReason)
	} else if len(o.Pods) == 0 {
		add("no pod has been created yet")
	}
	return strings.Join(reasons, "; ")
}
