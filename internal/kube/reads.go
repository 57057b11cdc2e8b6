package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A refresh reads every job of a configuration: a plan of 300 jobs is 300 reads of a handful
// of kinds in one or two namespaces. Reads of one resource in one namespace share a list: the
// first read of it in the process is a GET (or, for pods, a LIST by the job's selector), so a
// plan of one job lists no namespace; the second lists the resource in the namespace once, and
// that list answers it and every later read. A list is a consistent read (no resource
// version: the API server reads it from etcd's latest revision, as a GET), so a read from it
// sees what a GET made at that moment would have.
//
// A list is kept for listLife at most, and is dropped when this process writes to the resource
// in the namespace: a read after the process's own write lists again and sees it. Within one
// plan, a list is as old as the plan's first reads, as the plan itself.
const listLife = 10 * time.Second

type sharedLists struct {
	mu    sync.Mutex
	reads map[informerKey]int
	lists map[informerKey]*sharedList
}

// sharedList is one LIST that the reads of its resource and namespace share.
type sharedList struct {
	done  chan struct{} // closed when the list is in
	taken time.Time
	err   error
	// objects by name (job objects and their dependents) as JSON, which a read decodes: a job
	// held as JSON takes a fraction of the memory of its decoded maps, and a refresh of 1,000
	// jobs holds every one of them until its last read; or pods.
	objects map[string][]byte
	// pods are indexed as an informer's are (podIndexers): a read finds its job's pods among
	// the kind's without looking at each (a refresh of 1,000 jobs would otherwise match every
	// job's selector against every pod of its kind).
	pods cache.Indexer
	// workloads are Kueue's Workloads of jobs as JSON, each job's newest by the job's UID
	// (kueue.JobUIDLabel), which a read decodes: a Workload carries its job's pod templates,
	// and a refresh of 1,000 queued jobs held every one decoded until its last read.
	workloads map[string][]byte
}

// sharedList returns the list answering a read of key, listing it if none is current, or nil
// when this is the first read of key in the process (the caller reads the one object).
func (c *Client) sharedList(ctx context.Context, key informerKey) (*sharedList, error) {
	c.lists.mu.Lock()
	if c.lists.reads == nil {
		c.lists.reads, c.lists.lists = map[informerKey]int{}, map[informerKey]*sharedList{}
	}
	c.lists.reads[key]++
	if c.lists.reads[key] == 1 {
		c.lists.mu.Unlock()
		return nil, nil
	}
	l := c.lists.lists[key]
	if l == nil || !l.current() {
		l = &sharedList{done: make(chan struct{}), taken: time.Now()}
		c.lists.lists[key] = l
		go func() {
			defer close(l.done)
			// Not the reader's context: the list serves every reader, and one reader's
			// cancellation must not fail the others'.
			l.err = c.list(context.WithoutCancel(ctx), key, l)
			if l.err != nil {
				c.dropList(key, l)
			}
		}()
	}
	c.lists.mu.Unlock()
	select {
	case <-l.done:
		return l, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// current says whether the list may still answer reads: taken less than listLife ago.
func (l *sharedList) current() bool {
	return time.Since(l.taken) < listLife
}

func (c *Client) list(ctx context.Context, key informerKey, l *sharedList) error {
	what := fmt.Sprintf("LIST %s in %s (shared by reads)", key.gvr.Resource, key.namespace)
	tflog.Debug(ctx, what)
	if key.gvr == podsGVR {
		core, err := c.coreREST()
		if err != nil {
			return err
		}
		pods, err := listPods(ctx, core, key.namespace, key.selector, what)
		if err != nil {
			return fmt.Errorf("listing pods in %s: %w", key.namespace, err)
		}
		l.pods = cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers)
		for i := range pods {
			if err := l.pods.Add(&pods[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if key.gvr == kueue.WorkloadGVR {
		items, err := c.listJSON(ctx, kueue.WorkloadGVR, key.namespace, kueue.JobUIDLabel)
		if err != nil {
			return err
		}
		l.workloads = map[string][]byte{}
		newest := map[string]metav1.Object{}
		for name, data := range items {
			var meta metav1.PartialObjectMetadata
			if err := json.Unmarshal(data, &meta); err != nil {
				return fmt.Errorf("reading Workload %s: %w", name, err)
			}
			uid := meta.Labels[kueue.JobUIDLabel]
			if newerWorkload(&meta, newest[uid]) {
				newest[uid], l.workloads[uid] = &meta, data
			}
		}
		return nil
	}
	var err error
	l.objects, err = c.listJSON(ctx, key.gvr, key.namespace, "")
	return c.explainNotFound(ctx, key.gvr, err)
}

func (c *Client) dropList(key informerKey, l *sharedList) {
	c.lists.mu.Lock()
	defer c.lists.mu.Unlock()
	if c.lists.lists[key] == l {
		delete(c.lists.lists, key)
	}
}

// wrote drops the shared list of the resource in the namespace: the process has just written to
// it, and its next read lists again.
func (c *Client) wrote(gvr schema.GroupVersionResource, namespace string) {
	c.lists.mu.Lock()
	defer c.lists.mu.Unlock()
	for key := range c.lists.lists {
		if key.gvr == gvr && key.namespace == namespace {
			delete(c.lists.lists, key)
		}
	}
}

// Read is Get for a refresh: the object, or nil if it does not exist, read from the list that
// the reads of its resource and namespace share (see sharedList).
func (c *Client) Read(ctx context.Context, t Target) (*unstructured.Unstructured, error) {
	l, err := c.sharedList(ctx, informerKey{gvr: t.GVR, namespace: t.Namespace})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t, err)
	}
	if l == nil {
		return c.Get(ctx, t)
	}
	data, ok := l.objects[t.Name]
	if !ok {
		return nil, nil
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("reading %s: %w", t, err)
	}
	return obj, nil
}

// ReadPods is Pods for a refresh, from the list its reads share of the pods of its kind's jobs
// in the namespace (kindPods).
func (c *Client) ReadPods(ctx context.Context, t Target) ([]corev1.Pod, error) {
	ofKind, err := kindPods(t)
	if err != nil {
		return nil, err
	}
	l, err := c.sharedList(ctx, informerKey{gvr: podsGVR, namespace: t.Namespace, selector: ofKind})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", t, err)
	}
	if l == nil {
		return c.Pods(ctx, t)
	}
	selector, err := labels.Parse(t.PodSelector)
	if err != nil {
		return nil, err
	}
	matched, err := podsMatching(l.pods, selector)
	if err != nil {
		return nil, err
	}
	pods := make([]corev1.Pod, len(matched))
	for i := range matched {
		pods[i] = *matched[i].DeepCopy() // the reader's own, as from the server
	}
	return pods, nil
}

// ReadWorkload is Workload for a refresh: the job's Workload from the list its reads share of
// the namespace's Workloads of jobs (by Kueue's job-UID label).
func (c *Client) ReadWorkload(ctx context.Context, job *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	l, err := c.sharedList(ctx, informerKey{gvr: kueue.WorkloadGVR, namespace: job.GetNamespace()})
	if err != nil {
		return nil, fmt.Errorf("reading the Kueue Workload of %s: %w", job.GetName(), err)
	}
	if l == nil {
		return c.Workload(ctx, job)
	}
	data, ok := l.workloads[string(job.GetUID())]
	if !ok {
		return nil, nil
	}
	wl := &unstructured.Unstructured{} // the reader's own, as from the server
	if err := wl.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("reading the Kueue Workload of %s: %w", job.GetName(), err)
	}
	return wl, nil
}

// ReadObserved is Observe for a refresh: the object, its pods and its Workload through Read,
// ReadPods and ReadWorkload.
func (c *Client) ReadObserved(ctx context.Context, t Target) (jobs.Observed, error) {
	return c.observe(ctx, t, true)
}
