package kube

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// Waits share their watches: one informer per resource, namespace and selector for the whole
// provider process (one Terraform command), however many jobs it waits for. An apply of 300 jobs
// opens the same few watches as an apply of one: the job kinds', the pods of each kind's jobs and
// the warnings about them, and Kueue's Workloads when a job is queued. Each wait registers a handler that wakes it only for
// its own job's changes and reads its job from the informers' indexes.
//
// An informer no wait uses any more stops after informerLinger, so a process that waits again
// (the next job of an apply) keeps its watch, and one that is done does not hold it. An apply's
// jobs of one kind can wait minutes behind another's (mpi-operator's rate limiter holds the
// MPIJobs while they fill Terraform's parallelism): at 30 seconds, an apply of 300 jobs
// restarted its informers and opened twice the watches of an apply of 100.
const informerLinger = 10 * time.Minute

type informerKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	// metadata: the objects' metadata alone, indexed by owner (what destroy waits for).
	metadata bool
	// selector selects on the server what the informer holds: pods by a label selector (the
	// pods of one kind's jobs, kindPods), events by a field selector (those about one kind's
	// jobs). Other teams' pods in a shared namespace are neither listed nor watched.
	selector string
}

// sharedInformer is one running informer and who uses it.
type sharedInformer struct {
	cache.SharedIndexInformer
	users  int
	stop   context.CancelFunc
	linger *time.Timer
	// lastErr is the last error of the informer's LIST or WATCH; it matters only until it syncs.
	lastErr atomic.Pointer[error]
}

type informers struct {
	mu sync.Mutex
	m  map[informerKey]*sharedInformer
}

// Index names of the shared informers.
const (
	// byLabel indexes pods by each of their labels, as "key=value".
	byLabel = "label"
	// byInvolved indexes events by their object's kind and name, as "Kind/name".
	byInvolved = "involved"
	// byJobUID indexes Kueue's Workloads by the UID of their job.
	byJobUID = "jobUID"
	// byOwner indexes objects' metadata by the UIDs of their owners.
	byOwner = "owner"
)

// acquire returns the process's informer for key, starting it if it is not running, and the
// function that says the caller is done with it.
func (c *Client) acquire(key informerKey) (*sharedInformer, func(), error) {
	c.informers.mu.Lock()
	defer c.informers.mu.Unlock()
	s := c.informers.m[key]
	if s == nil {
		inf, err := c.newInformer(key)
		if err != nil {
			return nil, nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		s = &sharedInformer{SharedIndexInformer: inf, stop: cancel}
		if err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			s.lastErr.Store(&err)
			cache.DefaultWatchErrorHandler(ctx, r, err)
		}); err != nil {
			cancel()
			return nil, nil, err
		}
		go inf.RunWithContext(ctx)
		if c.informers.m == nil {
			c.informers.m = map[informerKey]*sharedInformer{}
		}
		c.informers.m[key] = s
	}
	s.users++
	if s.linger != nil {
		s.linger.Stop()
		s.linger = nil
	}
	var once sync.Once
	return s, func() { once.Do(func() { c.release(key, s) }) }, nil
}

func (c *Client) release(key informerKey, s *sharedInformer) {
	c.informers.mu.Lock()
	defer c.informers.mu.Unlock()
	s.users--
	if s.users > 0 {
		return
	}
	s.linger = time.AfterFunc(informerLinger, func() {
		c.informers.mu.Lock()
		defer c.informers.mu.Unlock()
		if s.users == 0 && c.informers.m[key] == s {
			s.stop()
			delete(c.informers.m, key)
		}
	})
}

func (c *Client) newInformer(key informerKey) (cache.SharedIndexInformer, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	if key.metadata {
		inf := cache.NewSharedIndexInformerWithOptions(listWatch(c.meta.Resource(key.gvr).Namespace(key.namespace), c.meta),
			&metav1.PartialObjectMetadata{}, cache.SharedIndexInformerOptions{Indexers: cache.Indexers{byOwner: indexByOwner}, ObjectDescription: key.gvr.String()})
		return inf, inf.SetTransform(slimMetadata)
	}
	switch key.gvr {
	case podsGVR:
		// Pods as typed objects over protobuf (the core client's), without their managedFields:
		// the namespace's pods are the bulk of what a wait holds.
		inf := cache.NewSharedIndexInformerWithOptions(cache.NewFilteredListWatchFromClient(c.core, "pods", key.namespace,
			func(o *metav1.ListOptions) { o.LabelSelector = key.selector }),
			&corev1.Pod{}, cache.SharedIndexInformerOptions{Indexers: podIndexers})
		return inf, inf.SetTransform(func(obj any) (any, error) {
			if p, ok := obj.(*corev1.Pod); ok {
				return slimPod(p), nil
			}
			return obj, nil
		})
	case eventsGVR:
		// Only warnings explain why a job does not run, and of each only what says so: a
		// namespace of hundreds of jobs holds thousands of events.
		warnings := fields.AndSelectors(fields.OneTermEqualSelector("type", corev1.EventTypeWarning), fields.ParseSelectorOrDie(key.selector)).String()
		inf := cache.NewSharedIndexInformerWithOptions(cache.NewFilteredListWatchFromClient(c.core, "events", key.namespace,
			func(o *metav1.ListOptions) { o.FieldSelector = warnings }),
			&corev1.Event{}, cache.SharedIndexInformerOptions{Indexers: cache.Indexers{byInvolved: indexByInvolved}})
		return inf, inf.SetTransform(slimEvent)
	}
	indexers := cache.Indexers{}
	if key.gvr == kueue.WorkloadGVR {
		indexers[byJobUID] = indexByJobUID
	}
	// Nothing a wait reads is in managedFields, which are often half of a job object, or in a
	// job's pod templates.
	inf := cache.NewSharedIndexInformerWithOptions(listWatch(dyn.Resource(key.gvr).Namespace(key.namespace), dyn),
		&unstructured.Unstructured{}, cache.SharedIndexInformerOptions{Indexers: indexers, ObjectDescription: key.gvr.String()})
	kind := kindOf(key.gvr)
	return inf, inf.SetTransform(func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // already held (a transform may see an object twice)
		}
		if kind != nil {
			kind.DropPodTemplates(u)
		}
		u.SetManagedFields(nil)
		return compact(u)
	})
}

// kindOf is the job kind whose objects gvr names, nil for any other resource.
func kindOf(gvr schema.GroupVersionResource) *jobs.Kind {
	for _, k := range jobs.Kinds() {
		if k.GVR == gvr {
			return k
		}
	}
	return nil
}

func dropManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// podIndexers index pods, in an informer or a shared list, for podsMatching.
var podIndexers = cache.Indexers{byLabel: indexByLabel}

func indexByLabel(obj any) ([]string, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(a.GetLabels()))
	for k, v := range a.GetLabels() {
		keys = append(keys, k+"="+v)
	}
	return keys, nil
}

func indexByOwner(obj any) ([]string, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	refs := a.GetOwnerReferences()
	uids := make([]string, len(refs))
	for i, ref := range refs {
		uids[i] = string(ref.UID)
	}
	return uids, nil
}

// ownedBy names what the object of that UID owns in the metadata informers, directly or
// through one another, as "resource/name", in the order found.
func ownedBy(infs []*sharedInformer, resources []string, uid types.UID) ([]string, error) {
	var names []string
	seen := map[string]bool{string(uid): true}
	for owners := []string{string(uid)}; len(owners) > 0; owners = owners[1:] {
		for i, s := range infs {
			items, err := s.GetIndexer().ByIndex(byOwner, owners[0])
			if err != nil {
				return nil, err
			}
			for _, item := range items {
				a, err := meta.Accessor(item)
				if err != nil {
					return nil, err
				}
				if u := string(a.GetUID()); !seen[u] {
					seen[u] = true
					owners = append(owners, u)
					names = append(names, resources[i]+"/"+a.GetName())
				}
			}
		}
	}
	return names, nil
}

func indexByInvolved(obj any) ([]string, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return nil, fmt.Errorf("unexpected %T in the events informer", obj)
	}
	return []string{e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name}, nil
}

func indexByJobUID(obj any) ([]string, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if uid, ok := a.GetLabels()[kueue.JobUIDLabel]; ok {
		return []string{uid}, nil
	}
	return nil, nil
}

// podsMatching are the pods of the indexer (an informer's, or a shared list's) that selector
// matches, found through one of its equality requirements' byLabel index when it has one.
func podsMatching(pods cache.Indexer, selector labels.Selector) ([]corev1.Pod, error) {
	var items []any
	requirements, _ := selector.Requirements()
	indexed := false
	for _, r := range requirements {
		if (r.Operator() == selection.Equals || r.Operator() == selection.DoubleEquals || r.Operator() == selection.In) && r.Values().Len() == 1 {
			var err error
			if items, err = pods.ByIndex(byLabel, r.Key()+"="+r.Values().List()[0]); err != nil {
				return nil, err
			}
			indexed = true
			break
		}
	}
	if !indexed {
		items = pods.List()
	}
	matched := make([]corev1.Pod, 0, len(items))
	for _, item := range items {
		p, ok := item.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("unexpected %T among pods", item)
		}
		if selector.Matches(labels.Set(p.Labels)) {
			matched = append(matched, *p)
		}
	}
	return matched, nil
}

// synced waits until each informer has synced, and fails at once when one cannot list for a
// reason waiting does not mend (forbidden, unauthorized, no such resource).
func synced(ctx context.Context, infs ...*sharedInformer) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		all := true
		for _, s := range infs {
			if s.HasSynced() {
				continue
			}
			all = false
			if p := s.lastErr.Load(); p != nil && lastingListError(*p) {
				return *p
			}
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func lastingListError(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// objectOf is obj itself, or the last state of a deleted one the informer missed the deletion of.
func objectOf(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

// notOlder says whether resource version a is at or past b. Resource versions are opaque to
// clients in general, but the API server's are etcd revisions; one that is not a number is
// taken as current.
func notOlder(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA != nil || errB != nil || x >= y
}

// objectIn is the object of that name in an informer of unstructured objects (a copy of its
// own), or nil.
func objectIn(inf cache.SharedIndexInformer, namespace, name string) (*unstructured.Unstructured, error) {
	item, exists, err := inf.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !exists {
		return nil, err
	}
	return heldObject(item)
}

// kindPods is the label selector of the pods of every job of the target's kind: the target's
// own pod selector with its job's name (JobName, or Name) as any value (a job's pods carry its
// operator's label of the job's name, whatever the name). An informer of it serves every job of
// the kind, and what they own, at once.
func kindPods(t Target) (string, error) {
	selector, err := labels.Parse(t.PodSelector)
	if err != nil {
		return "", err
	}
	job := t.Name
	if t.JobName != "" {
		job = t.JobName
	}
	requirements, _ := selector.Requirements()
	out := labels.NewSelector()
	for _, r := range requirements {
		if r.Operator() == selection.Equals && r.Values().Has(job) {
			exists, err := labels.NewRequirement(r.Key(), selection.Exists, nil)
			if err != nil {
				return "", err
			}
			r = *exists
		}
		out = out.Add(r)
	}
	return out.String(), nil
}

// kindEvents is the field selector of the events about jobs of the target's kind.
func kindEvents(t Target) string {
	return fields.OneTermEqualSelector("involvedObject.kind", t.Kind).String()
}
