package jobs

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// Queued is the phase of a job Kueue holds: submitted to a LocalQueue (QueueLabel) and not
// admitted, because its quota is used up, it was preempted or evicted, or Kueue has not got to
// it yet. Kueue keeps such a job suspended, so without this it would read SUSPENDED; it starts by
// itself once admitted.
const Queued = "QUEUED"

// QueueName is the LocalQueue a job object was submitted to, or "".
func QueueName(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	return obj.GetLabels()[QueueLabel]
}

// LocalQueueKey is the job object's LocalQueue as "namespace/name", the key Kueue's queues are
// read and declared by, or "" for a job of no queue.
func LocalQueueKey(obj *unstructured.Unstructured) string {
	if q := QueueName(obj); q != "" {
		return obj.GetNamespace() + "/" + q
	}
	return ""
}

// withQueue turns the status of a queued job that Kueue has not admitted into QUEUED, with
// Kueue's reason; suspended says whether the job object is suspended (Kind.Suspended). A job
// without a queue, or finished, keeps its status.
func withQueue(s Status, o Observed, suspended bool) Status {
	if QueueName(o.Object) == "" {
		return s
	}
	s.Cluster = DispatchedTo(o)
	if Finished(s.Phase) {
		return s
	}
	if o.Workload == nil {
		// Kueue makes the Workload just after the job; until then the job is suspended.
		if suspended || s.Phase == Pending {
			s.Phase, s.QueueReason = Queued, "waiting for Kueue to make its Workload"
		}
		return s
	}
	a := kueue.ReadWorkload(o.Workload)
	if a.Admitted {
		if s.Phase == Suspended {
			// Admitted, and the operator has not seen the job resumed yet.
			s.Phase = Pending
		}
		return s
	}
	s.Phase, s.QueueReason = Queued, a.Reason
	return s
}

// DispatchedTo is the MultiKueue worker cluster a queued job was dispatched to (its Workload's
// status.clusterName): there a copy of the job runs, with the pods; the job object here only
// mirrors that copy's status. Empty for a job that runs where it was created.
func DispatchedTo(o Observed) string {
	if QueueName(o.Object) == "" || o.Workload == nil {
		return ""
	}
	return kueue.ReadWorkload(o.Workload).Cluster
}

// ownSuspend is whether a job with that queue and suspend field is suspended by its owner: a
// queued job's suspend is Kueue's (it suspends the job until it admits it, and again when it
// preempts it), so it reads as the job's own only without a queue.
func ownSuspend(queue string, suspend *bool) bool {
	return queue == "" && suspend != nil && *suspend
}

// Admitted says whether a queued job may run: its Workload is admitted. A job without a queue
// always may.
func Admitted(o Observed) bool {
	if QueueName(o.Object) == "" {
		return true
	}
	return o.Workload != nil && kueue.ReadWorkload(o.Workload).Admitted
}

// WithoutAdmission returns the job object as its owner wrote it, before Kueue admitted it:
// admission writes the node labels and tolerations of the flavors Kueue assigned into the job's
// pod templates (and takes them out again when it suspends the job), while its Workload keeps
// the templates as they were given, one pod set per replica type. So a refresh of an admitted
// job reads the pod templates' node selector and tolerations from the Workload, and Kueue's
// placement is not taken for drift. Without a Workload the object is returned as it is.
func WithoutAdmission(obj, workload *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil || workload == nil {
		return obj
	}
	podSets, _, _ := unstructured.NestedSlice(workload.Object, "spec", "podSets")
	given := map[string]map[string]any{}
	for _, ps := range podSets {
		m, _ := ps.(map[string]any)
		name, _ := m["name"].(string)
		if spec, ok, _ := unstructured.NestedMap(m, "template", "spec"); ok {
			given[name] = spec
		}
	}
	out := obj.DeepCopy()
	spec, _, _ := unstructured.NestedMap(out.Object, "spec")
	for field, replicas := range spec {
		if !strings.HasSuffix(field, "ReplicaSpecs") {
			continue
		}
		byType, _ := replicas.(map[string]any)
		for replicaType, rs := range byType {
			podSpec, ok := given[strings.ToLower(replicaType)]
			if !ok {
				continue
			}
			rsMap, _ := rs.(map[string]any)
			for _, key := range []string{"nodeSelector", "tolerations"} {
				path := []string{"template", "spec", key}
				if v, ok := podSpec[key]; ok {
					_ = unstructured.SetNestedField(rsMap, runtime.DeepCopyJSONValue(v), path...)
				} else {
					unstructured.RemoveNestedField(rsMap, path...)
				}
			}
		}
	}
	out.Object["spec"] = spec
	return out
}

// KueueGrace is how long a queued job may be seen neither suspended nor with a Workload before
// Kueue is taken not to manage its kind: Kueue's webhook suspends a queued job as it is made, and
// its controller makes the Workload within seconds.
const KueueGrace = 15 * time.Second

// KueueIntegration is the name of the kind's integration in Kueue's configuration
// (integrations.frameworks): its API group and lowercase kind.
func (k *Kind) KueueIntegration() string { return k.GVR.Group + "/" + strings.ToLower(k.Object) }

// Unqueued says, of a job submitted to a LocalQueue, that Kueue does not manage its kind: it was
// not suspended and has had no Workload for KueueGrace since it was made, so it runs outside
// every quota (a Kueue whose configuration leaves the kind's integration out: since v0.19 the
// Kubeflow v1 integrations are off by default). recheck is how long until that may be said though
// nothing changes.
func (k *Kind) Unqueued(o Observed, now time.Time) (why string, recheck time.Duration) {
	if QueueName(o.Object) == "" || o.Workload != nil || k.Suspended(o.Object) {
		return "", 0
	}
	if left := o.Object.GetCreationTimestamp().Add(KueueGrace).Sub(now); left > 0 {
		return "", left
	}
	return fmt.Sprintf("Kueue does not manage %ss on this cluster: the job has queue_name %q, but Kueue neither suspended it nor made a "+
		"Workload for it in %d seconds, so it runs outside every quota. Enable the integration %s in Kueue's configuration "+
		"(integrations.frameworks in its manager's ConfigMap, or the Helm chart's managerConfig; since Kueue v0.19 the Kubeflow "+
		"training-operator integrations are off unless listed), or remove queue_name", k.Object, QueueName(o.Object),
		int(KueueGrace.Seconds()), k.KueueIntegration()), 0
}
