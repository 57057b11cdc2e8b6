package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	restfake "k8s.io/client-go/rest/fake"
	clienttesting "k8s.io/client-go/testing"
)

var tfJobs = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}

// readsClient is a Client over fake clientsets holding n TFJobs (job-0 ...) with a pod each,
// and the requests they were sent, as "VERB resource".
func readsClient(t *testing.T, n int) (*Client, func() []string) {
	t.Helper()
	scheme := runtime.NewScheme()
	var objects []runtime.Object
	var pods []corev1.Pod
	for i := range n {
		name := "job-" + string(rune('0'+i))
		job := &unstructured.Unstructured{}
		job.SetAPIVersion("kubeflow.org/v1")
		job.SetKind("TFJob")
		job.SetNamespace("default")
		job.SetName(name)
		objects = append(objects, job)
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-worker-0", Namespace: "default",
			Labels: map[string]string{"job": name}}})
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{tfJobs: "TFJobList"}, objects...)
	var mu sync.Mutex
	var requests []string
	record := func(action clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, strings.ToUpper(action.GetVerb())+" "+action.GetResource().Resource)
		return false, nil, nil
	}
	dyn.PrependReactor("*", "*", record)
	// Pods are read through the core group's REST client: from pods, by label selector.
	core := &restfake.RESTClient{NegotiatedSerializer: serializer.NewCodecFactory(coreScheme).WithoutConversion(), GroupVersion: corev1.SchemeGroupVersion,
		Client: restfake.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
			_, _, _ = record(clienttesting.NewListAction(podsGVR, schema.GroupVersionKind{}, "default", metav1.ListOptions{}))
			selector, err := labels.Parse(req.URL.Query().Get("labelSelector"))
			if err != nil {
				return nil, err
			}
			list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
			for _, p := range pods {
				if selector.Matches(labels.Set(p.Labels)) {
					list.Items = append(list.Items, p)
				}
			}
			return jsonResponse(list)
		})}
	// The lists a refresh shares are read raw, as they stream in: from the fake's objects.
	raw := &restfake.RESTClient{NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion(),
		Client: restfake.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
			resource := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
			_, _, _ = record(clienttesting.NewListAction(schema.GroupVersionResource{Resource: resource}, schema.GroupVersionKind{}, "default", metav1.ListOptions{}))
			list, err := dyn.Tracker().List(tfJobs, schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "TFJob"}, "default")
			if err != nil {
				return nil, err
			}
			return jsonResponse(list)
		})}
	c := &Client{dyn: dyn, core: core, raw: raw}
	c.once.Do(func() {})
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := requests
		requests = nil
		return out
	}
}

func jsonResponse(obj any) (*http.Response, error) {
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(body))}, nil
}

func target(name string) Target {
	return Target{GVR: tfJobs, Kind: "TFJob", Namespace: "default", Name: name, PodSelector: "job=" + name}
}

// The first read of a resource in a namespace is a GET; the second lists it once, and the list
// answers every later read, pods alike. A write of the process drops the list.
func TestReadsShareOneList(t *testing.T) {
	c, requests := readsClient(t, 5)
	ctx := context.Background()
	obj, err := c.Read(ctx, target("job-0"))
	if err != nil || obj == nil || obj.GetName() != "job-0" {
		t.Fatalf("first read: %v, %v", obj, err)
	}
	if got := requests(); len(got) != 1 || got[0] != "GET tfjobs" {
		t.Fatalf("the first read sent %v, want one GET", got)
	}
	var wg sync.WaitGroup
	for i := 1; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "job-" + string(rune('0'+i))
			if obj, err := c.Read(ctx, target(name)); err != nil || obj == nil || obj.GetName() != name {
				t.Errorf("read of %s: %v, %v", name, obj, err)
			}
		}()
	}
	wg.Wait()
	if got := requests(); len(got) != 1 || got[0] != "LIST tfjobs" {
		t.Fatalf("four more reads sent %v, want one LIST", got)
	}
	if obj, err := c.Read(ctx, target("job-9")); err != nil || obj != nil {
		t.Fatalf("a job the list does not hold: %v, %v; want nil, nil", obj, err)
	}
	// Objects read are the reader's own: changing one changes no other read.
	obj, _ = c.Read(ctx, target("job-1"))
	obj.SetLabels(map[string]string{"changed": "yes"})
	if again, _ := c.Read(ctx, target("job-1")); again.GetLabels()["changed"] != "" {
		t.Fatal("a read's object is shared with the list")
	}
	if got := requests(); len(got) != 0 {
		t.Fatalf("reads from the list sent %v", got)
	}

	for i := range 3 {
		pods, err := c.ReadPods(ctx, target("job-"+string(rune('0'+i))))
		if err != nil || len(pods) != 1 {
			t.Fatalf("pods of job-%d: %v, %v", i, pods, err)
		}
	}
	if got := requests(); len(got) != 2 || got[0] != "LIST pods" || got[1] != "LIST pods" {
		t.Fatalf("three pod reads sent %v, want a LIST by selector and one of the namespace", got)
	}

	if _, err := c.Patch(ctx, target("job-2"), "application/merge-patch+json", []byte(`{"metadata":{"labels":{"a":"b"}}}`)); err != nil {
		t.Fatal(err)
	}
	requests()
	obj, err = c.Read(ctx, target("job-2"))
	if err != nil || obj.GetLabels()["a"] != "b" {
		t.Fatalf("read after the process's own patch: %v, %v; want the patched job", obj, err)
	}
	if got := requests(); len(got) != 1 || got[0] != "LIST tfjobs" {
		t.Fatalf("the read after a write sent %v, want a new LIST", got)
	}
}

// A list older than listLife answers no read.
func TestSharedListExpires(t *testing.T) {
	c, requests := readsClient(t, 2)
	ctx := context.Background()
	for range 2 {
		if _, err := c.Read(ctx, target("job-0")); err != nil {
			t.Fatal(err)
		}
	}
	requests()
	c.lists.mu.Lock()
	for _, l := range c.lists.lists {
		l.taken = time.Now().Add(-listLife)
	}
	c.lists.mu.Unlock()
	if _, err := c.Read(ctx, target("job-1")); err != nil {
		t.Fatal(err)
	}
	if got := requests(); len(got) != 1 || got[0] != "LIST tfjobs" {
		t.Fatalf("a read after the list's life sent %v, want a new LIST", got)
	}
}
