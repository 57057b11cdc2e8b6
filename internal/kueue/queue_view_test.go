package kueue

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// workloadObject is a Workload of a job in namespace/queue with that priority and age, with the
// conditions given.
func workloadObject(namespace, name, queue string, priority int64, created time.Time, conditions ...map[string]any) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"queueName": queue, "priority": priority},
	}}
	u.SetCreationTimestamp(metav1.NewTime(created))
	u.SetOwnerReferences([]metav1.OwnerReference{{Kind: "MPIJob", Name: name + "-job", Controller: ptr.To(true)}})
	var cs []any
	for _, c := range conditions {
		cs = append(cs, c)
	}
	if len(cs) > 0 {
		u.Object["status"] = map[string]any{"conditions": cs}
	}
	return u
}

// A ClusterQueue's workloads, through every LocalQueue that names it, are listed in Kueue's order
// (priority, then age), finished ones left out; the head is the first that waits, with its reason.
func TestAQueuesWorkloadsAreListedInKueuesOrderWithTheHeadThatWaits(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	admitted := map[string]any{"type": "Admitted", "status": "True"}
	noQuota := map[string]any{"type": "QuotaReserved", "status": "False", "message": "couldn't assign flavors to pod set worker: insufficient quota for nvidia.com/gpu"}
	finished := map[string]any{"type": "Finished", "status": "True"}
	objs := []unstructured.Unstructured{
		workloadObject("team-a", "young-high", "gpus", 100, now.Add(-time.Minute), noQuota),
		workloadObject("team-a", "old-low", "gpus", 0, now.Add(-time.Hour), noQuota),
		workloadObject("team-b", "running", "gpus", 0, now.Add(-2*time.Hour), admitted),
		workloadObject("team-b", "done", "gpus", 0, now.Add(-3*time.Hour), finished),
		workloadObject("team-c", "elsewhere", "other", 0, now.Add(-time.Hour), noQuota),
	}
	localQueues := map[string]string{"team-a/gpus": "research", "team-b/gpus": "research", "team-c/other": "batch"}
	got := QueueWorkloads(objs, localQueues, func(_, _, cq string) bool { return cq == "research" })
	var names []string
	for _, w := range got {
		names = append(names, w.Name)
	}
	if want := []string{"young-high", "running", "old-low"}; len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
		t.Fatalf("workloads %v, want %v", names, want)
	}
	if !got[1].Admitted || got[1].Reason != "" || got[0].Admitted || got[0].Job != "MPIJob young-high-job" || got[0].ClusterQueue != "research" {
		t.Errorf("read otherwise: %+v", got)
	}
	head, ok := Head(got)
	if !ok || head.Name != "young-high" || head.Reason != noQuota["message"] {
		t.Errorf("head %+v (%v), want young-high waiting for quota", head, ok)
	}
	if _, ok := Head(got[1:2]); ok {
		t.Error("a queue whose workloads are all admitted has a head that waits")
	}
}
