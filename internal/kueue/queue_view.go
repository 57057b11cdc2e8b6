package kueue

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// QueuedWorkload is one workload of a queue as the queue data sources list it: its job, its
// LocalQueue, its priority, whether it is admitted, and otherwise why it waits.
type QueuedWorkload struct {
	Namespace, Name string
	// Job is the job the workload stands for, as "Kind name" (its controller owner).
	Job        string
	LocalQueue string
	// ClusterQueue is the ClusterQueue it was admitted through, or that its LocalQueue names.
	ClusterQueue string
	Priority     int32
	Created      time.Time
	Admitted     bool
	// Reason says why it is not admitted (ReadWorkload's); empty when it is.
	Reason string
}

// QueueWorkloads are the unfinished workloads of objs that belong to a queue (match says which,
// by the workload's namespace, LocalQueue and ClusterQueue), in Kueue's order of its queue:
// higher priority first, then the older (baseCompareFunc in pkg/cache/queue/cluster_queue.go at
// v0.19.2: its priority, then its queue-order timestamp; that an evicted workload's timestamp is
// its eviction's, and admission fair sharing's ordering by LocalQueue usage, are not modelled).
// localQueues maps "namespace/name" to the LocalQueue's ClusterQueue.
func QueueWorkloads(objs []unstructured.Unstructured, localQueues map[string]string, match func(namespace, localQueue, clusterQueue string) bool) []QueuedWorkload {
	var out []QueuedWorkload
	for i := range objs {
		u := &objs[i]
		if c := condition(u, "Finished"); c != nil && c["status"] == "True" {
			continue
		}
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		lq := str(spec, "queueName")
		cq, _, _ := unstructured.NestedString(u.Object, "status", "admission", "clusterQueue")
		if cq == "" {
			cq = localQueues[u.GetNamespace()+"/"+lq]
		}
		if !match(u.GetNamespace(), lq, cq) {
			continue
		}
		w := QueuedWorkload{Namespace: u.GetNamespace(), Name: u.GetName(), LocalQueue: lq, ClusterQueue: cq,
			Priority: int32(count(spec["priority"])), Created: u.GetCreationTimestamp().Time}
		for _, ref := range u.GetOwnerReferences() {
			if ref.Controller != nil && *ref.Controller {
				w.Job = ref.Kind + " " + ref.Name
			}
		}
		a := ReadWorkload(u)
		w.Admitted = a.Admitted
		if !a.Admitted {
			w.Reason = a.Reason
		}
		out = append(out, w)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return out
}

// Head is the first workload of ws (in queue order) that is not admitted: what the queue
// considers next, and the reason it waits; ok is false when none waits.
func Head(ws []QueuedWorkload) (head QueuedWorkload, ok bool) {
	for _, w := range ws {
		if !w.Admitted {
			return w, true
		}
	}
	return QueuedWorkload{}, false
}
