package kube

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimepkg "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	restfake "k8s.io/client-go/rest/fake"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

var madeAt = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// workload is a Workload of the job with that UID, made at madeAt plus age, carrying a pod set
// whose template is about as large as a training job's.
func workload(name, uid string, age time.Duration) *unstructured.Unstructured {
	env := []any{}
	for i := range 12 {
		env = append(env, map[string]any{"name": fmt.Sprintf("SETTING_%d", i), "value": strings.Repeat("v", 24)})
	}
	container := map[string]any{"name": "worker", "image": "registry.example/train:1.0", "command": []any{"python3", "/opt/train.py", "--epochs", "100"},
		"env": env, "resources": map[string]any{"requests": map[string]any{"cpu": "1", "memory": "1Gi"}}}
	wl := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kueue.Group + "/" + kueue.Version, "kind": "Workload",
		"spec": map[string]any{"queueName": "team", "podSets": []any{map[string]any{"name": "worker", "count": int64(4),
			"template": map[string]any{"spec": map[string]any{"containers": []any{container}}}}}}}}
	wl.SetNamespace("default")
	wl.SetName(name)
	wl.SetLabels(map[string]string{kueue.JobUIDLabel: uid})
	wl.SetCreationTimestamp(metav1.NewTime(madeAt.Add(age)))
	return wl
}

// workloadsClient is a Client whose cluster holds these Workloads, listed raw from the list a
// refresh shares, and by the dynamic client for a first read.
func workloadsClient(t *testing.T, workloads []*unstructured.Unstructured) *Client {
	t.Helper()
	scheme := runtimepkg.NewScheme()
	var objects []runtimepkg.Object
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": kueue.Group + "/" + kueue.Version, "kind": "WorkloadList"}}
	for _, wl := range workloads {
		objects = append(objects, wl.DeepCopy())
		list.Items = append(list.Items, *wl)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{kueue.WorkloadGVR: "WorkloadList"}, objects...)
	raw := &restfake.RESTClient{NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion(),
		Client: restfake.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
			if !strings.HasSuffix(req.URL.Path, "/namespaces/default/workloads") || req.URL.Query().Get("labelSelector") != kueue.JobUIDLabel {
				return nil, fmt.Errorf("unexpected request %s", req.URL)
			}
			return jsonResponse(list)
		})}
	c := &Client{dyn: dyn, raw: raw}
	c.once.Do(func() {})
	return c
}

func jobOf(uid string) *unstructured.Unstructured {
	job := &unstructured.Unstructured{}
	job.SetNamespace("default")
	job.SetName("job-" + uid)
	job.SetUID(types.UID(uid))
	return job
}

// A refresh reads each job's newest Workload that is not being deleted, the same from the list
// its reads share as from the first read's own LIST, and each read is the reader's own.
func TestARefreshReadsEachJobsNewestWorkloadFromTheSharedList(t *testing.T) {
	deleting := workload("a-deleting", "uid-a", 2*time.Minute)
	deleting.SetDeletionTimestamp(&metav1.Time{Time: madeAt.Add(3 * time.Minute)})
	deleting.SetFinalizers([]string{"kueue.x-k8s.io/resource-in-use"})
	c := workloadsClient(t, []*unstructured.Unstructured{
		workload("a-new", "uid-a", time.Minute), workload("a-old", "uid-a", 0), deleting,
		workload("b-2", "uid-b", 0), workload("b-1", "uid-b", 0), // made in the same second
		workload("c", "uid-c", 0),
	})
	ctx := context.Background()
	want := map[string]string{"uid-a": "a-new", "uid-b": "b-1", "uid-c": "c", "uid-none": ""}
	// The first read lists by the job's UID; the later ones read the shared list.
	for _, uid := range []string{"uid-a", "uid-a", "uid-b", "uid-c", "uid-none"} {
		wl, err := c.ReadWorkload(ctx, jobOf(uid))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if wl != nil {
			got = wl.GetName()
		}
		if got != want[uid] {
			t.Errorf("the Workload of the job %s is %q, want %q", uid, got, want[uid])
		}
	}
	wl, _ := c.ReadWorkload(ctx, jobOf("uid-c"))
	wl.SetLabels(map[string]string{"changed": "yes"})
	if again, _ := c.ReadWorkload(ctx, jobOf("uid-c")); again.GetLabels()["changed"] != "" {
		t.Fatal("a read's Workload is shared with the list")
	}
}

// The list a refresh of many queued jobs shares holds each Workload in about the memory of its
// JSON, not decoded whole with its job's pod templates until the refresh's last read.
func TestASharedListOfWorkloadsHoldsEachAboutAsItsJSON(t *testing.T) {
	const n = 1000
	var workloads []*unstructured.Unstructured
	size := 0
	for i := range n {
		wl := workload(fmt.Sprintf("job-%d-worker", i), fmt.Sprintf("uid-%d", i), 0)
		data, err := wl.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		size += len(data)
		workloads = append(workloads, wl)
	}
	c := workloadsClient(t, workloads)
	ctx := context.Background()
	key := informerKey{gvr: kueue.WorkloadGVR, namespace: "default"}
	if _, err := c.sharedList(ctx, key); err != nil { // the first read lists nothing
		t.Fatal(err)
	}
	before := liveHeap()
	l, err := c.sharedList(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	after := liveHeap()
	held := max(after, before) - before
	runtime.KeepAlive(c) // the cluster's Workloads are held alike before and after
	if len(l.workloads) != n {
		t.Fatalf("the list holds the Workloads of %d jobs, want %d", len(l.workloads), n)
	}
	if held > 2*uint64(size) {
		t.Errorf("the list of %d Workloads holds %d bytes, more than twice their JSON (%d bytes)", n, held, size)
	}
}

// liveHeap is the heap in use after two collections: the first leaves what sync.Pools hold
// (encoding/json's buffers) to the second.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
