package kube

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A wait that did not get its answer ends in one of two ways besides a failure, each wrapped
// by Until's and UntilGone's error: ErrWaitTimeout when its context's deadline passed (the
// resource's timeout), ErrWaitInterrupted when its context was cancelled (Terraform stopped the
// provider: Ctrl-C, a CI runner's limit, a cancelled pipeline). Neither says anything of the
// object: it is as the wait last saw it.
var (
	ErrWaitTimeout     = errors.New("timed out")
	ErrWaitInterrupted = errors.New("was interrupted (Terraform was stopped)")
)

// Stopped says whether a wait's error is its timeout or an interruption, not a verdict.
func Stopped(err error) bool {
	return errors.Is(err, ErrWaitTimeout) || errors.Is(err, ErrWaitInterrupted) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// DispatchedElsewhere is Until's error for a queued job that Kueue dispatched to a MultiKueue
// worker cluster the client does not know: it runs there, where nothing here can follow it.
type DispatchedElsewhere struct{ Worker string }

func (e *DispatchedElsewhere) Error() string {
	return "Kueue dispatched it to the MultiKueue worker cluster " + e.Worker + ", which the provider block does not give (worker_cluster), " +
		"so its pods there cannot be followed"
}

// Check is a wait's verdict on what it sees of the target: done, failed (err), or neither, and
// then how long until the verdict may change though nothing the wait watches does (recheck; zero
// when only a change can change it).
type Check func(jobs.Observed) (done bool, recheck time.Duration, err error)

// Until watches the target object, its pods and the events about it, and returns once check
// says done or fails. check sees a consistent snapshot after every change, so nothing is polled;
// a check whose answer may change with time alone (a grace that runs out) says when to look
// again (recheck; zero for no time).
// On timeout or cancellation it returns the last snapshot with the error, so the caller can
// say why the job did not get there. written is the object as the create or patch before the
// wait returned it (nil if none): check never sees the job as it was before that write.
//
// A queued job that Kueue dispatches to a MultiKueue worker cluster the client knows runs there:
// once check has not been met here by the time of the dispatch, the wait goes on in that
// cluster, with check seeing the copy there (its object, pods, events and that cluster's
// Workload), and what it returns carries this cluster's Workload as it is then (read once
// more), which names the worker. One dispatched to a worker the client does not know ends the
// wait at once with DispatchedElsewhere.
func (c *Client) Until(ctx context.Context, t Target, written *unstructured.Unstructured, check Check) (jobs.Observed, error) {
	return c.untilDispatched(ctx, t, written, check, false)
}

// UntilEnd is Until for a check of the job's end, which its object alone answers: a job
// dispatched to a worker cluster the client does not know is followed here, by the status
// MultiKueue mirrors onto it from the copy there, to its end (or the wait's).
func (c *Client) UntilEnd(ctx context.Context, t Target, written *unstructured.Unstructured, check Check) (jobs.Observed, error) {
	return c.untilDispatched(ctx, t, written, check, true)
}

func (c *Client) untilDispatched(ctx context.Context, t Target, written *unstructured.Unstructured, check Check, mirrored bool) (jobs.Observed, error) {
	var worker *Client
	o, err := c.until(ctx, t, func(o jobs.Observed) (bool, time.Duration, error) {
		done, recheck, err := check(o)
		if done || err != nil {
			return done, 0, err
		}
		dispatched := jobs.DispatchedTo(o)
		if dispatched == "" {
			return false, recheck, nil
		}
		if worker = c.Worker(dispatched); worker == nil {
			if mirrored {
				return false, recheck, nil
			}
			return false, 0, &DispatchedElsewhere{Worker: dispatched}
		}
		return true, 0, nil
	}, waitOptions{events: true, written: written})
	if err != nil || worker == nil {
		return o, err
	}
	here, job := o.Workload, o.Object
	o, err = worker.until(ctx, WorkerCopy(t), check, waitOptions{events: true})
	// The Workload here as it is now: at the dispatch Kueue had named the worker, not yet
	// admitted the job here.
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if now, readErr := c.Workload(readCtx, job); readErr == nil && now != nil {
		here = now
	}
	o.Workload = here
	return o, err
}

// waitOptions say what until watches besides the target and its pods.
type waitOptions struct {
	// events: the Warning events about the target.
	events bool
	// tick > 0: check every tick too, changes or not.
	tick time.Duration
	// written is the object as this process last wrote it, or nil: until the informer has
	// caught up with that write, check is not called, so it never judges a job by its state
	// from before the write.
	written *unstructured.Unstructured
	// owned: what the target owns of the resources t.Owns (with t.UID known).
	owned bool
}

// until watches through the process's shared informers and calls check after every change to
// the target, its pods, its Workload, and what else opts say, and when check's recheck comes.
func (c *Client) until(ctx context.Context, t Target, check Check, opts waitOptions) (jobs.Observed, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	type use struct {
		informer *sharedInformer
		handle   cache.ResourceEventHandlerRegistration
		release  func()
	}
	var uses []use
	defer func() {
		for _, u := range uses {
			_ = u.informer.RemoveEventHandler(u.handle)
			u.release()
		}
	}()
	// watch uses the namespace's informer of gvr, woken only by the objects relevant says are
	// this target's.
	watch := func(gvr schema.GroupVersionResource, metadata bool, selector string, relevant func(any) bool) (*sharedInformer, error) {
		s, release, err := c.acquire(informerKey{gvr: gvr, namespace: t.Namespace, metadata: metadata, selector: selector})
		if err != nil {
			return nil, err
		}
		handle, err := s.AddEventHandler(cache.FilteringResourceEventHandler{
			FilterFunc: func(obj any) bool { return relevant(objectOf(obj)) },
			Handler:    handler,
		})
		if err != nil {
			release()
			return nil, err
		}
		uses = append(uses, use{s, handle, release})
		return s, nil
	}

	objects, err := watch(t.GVR, false, "", func(obj any) bool {
		a, err := meta.Accessor(obj)
		return err == nil && a.GetName() == t.Name
	})
	if err != nil {
		return jobs.Observed{}, err
	}
	watched := []*sharedInformer{objects}
	// An object without pods (a Kueue queue) has no pod selector: no pods are watched.
	var pods *sharedInformer
	var podSelector labels.Selector
	if t.PodSelector != "" {
		if podSelector, err = labels.Parse(t.PodSelector); err != nil {
			return jobs.Observed{}, err
		}
		ofKind, err := kindPods(t)
		if err != nil {
			return jobs.Observed{}, err
		}
		if pods, err = watch(podsGVR, false, ofKind, func(obj any) bool {
			p, ok := obj.(*corev1.Pod)
			return ok && podSelector.Matches(labels.Set(p.Labels))
		}); err != nil {
			return jobs.Observed{}, err
		}
		watched = append(watched, pods)
	}
	var events *sharedInformer
	if opts.events {
		if events, err = watch(eventsGVR, false, kindEvents(t), func(obj any) bool {
			e, ok := obj.(*corev1.Event)
			return ok && e.InvolvedObject.Kind == t.Kind && e.InvolvedObject.Name == t.Name
		}); err != nil {
			return jobs.Observed{}, err
		}
		watched = append(watched, events)
	}
	// What the target owned wakes the wait as it goes; an object that owns none is not looked
	// at (owner references of any UID: the wait reads from the index whose are its target's).
	var owned []*sharedInformer
	var ownedResources []string
	if opts.owned && t.UID != "" {
		for _, gvr := range t.Owns {
			s, err := watch(gvr, true, "", func(obj any) bool {
				a, err := meta.Accessor(obj)
				return err == nil && len(a.GetOwnerReferences()) > 0
			})
			if err != nil {
				return jobs.Observed{}, err
			}
			owned = append(owned, s)
			ownedResources = append(ownedResources, gvr.Resource)
		}
		watched = append(watched, owned...)
	}
	// A job submitted to a Kueue queue has its Workloads watched from the first sight of it,
	// found by its UID.
	var workloads *sharedInformer
	var jobUID atomic.Value

	tflog.Debug(ctx, "watching "+t.String())
	started := time.Now()
	var last jobs.Observed
	stopped := func(err error) error {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			err = fmt.Errorf("%w after %s", ErrWaitTimeout, time.Since(started).Round(time.Second))
		case errors.Is(err, context.Canceled):
			err = fmt.Errorf("%w after %s", ErrWaitInterrupted, time.Since(started).Round(time.Second))
		}
		return err
	}
	if err := synced(ctx, watched...); err != nil {
		return last, stopped(err)
	}
	notify() // check the initial state, even if it is empty and so raised no event
	var ticks <-chan time.Time
	if opts.tick > 0 {
		ticker := time.NewTicker(opts.tick)
		defer ticker.Stop()
		ticks = ticker.C
	}
	recheck := time.NewTimer(0)
	recheck.Stop()
	defer recheck.Stop()
	for {
		select {
		case <-changed:
		case <-ticks:
		case <-recheck.C:
		case <-ctx.Done():
			return last, stopped(ctx.Err())
		}
		o, err := snapshot(t, objects, pods, podSelector, events)
		if err != nil {
			return last, err
		}
		if !caughtUp(o, objects, opts.written) {
			continue // the write's own event is on its way, and wakes the wait
		}
		if o.Owned, err = ownedBy(owned, ownedResources, t.UID); err != nil {
			return last, err
		}
		last = o
		if last.Object != nil && (workloads != nil || jobs.QueueName(last.Object) != "") {
			uid := string(last.Object.GetUID())
			jobUID.Store(uid)
			if workloads == nil {
				if workloads, err = watch(kueue.WorkloadGVR, false, "", func(obj any) bool {
					a, err := meta.Accessor(obj)
					return err == nil && a.GetLabels()[kueue.JobUIDLabel] == jobUID.Load()
				}); err != nil {
					return last, err
				}
				if err := synced(ctx, workloads); err != nil {
					return last, stopped(err)
				}
			}
			items, err := workloads.GetIndexer().ByIndex(byJobUID, uid)
			if err != nil {
				return last, err
			}
			list, err := unstructuredItems(items)
			if err != nil {
				return last, err
			}
			last.Workload = newestWorkload(list)
		}
		done, after, err := check(last)
		if err != nil || done {
			tflog.Debug(ctx, "finished watching "+t.String(), map[string]any{"seconds": time.Since(started).Seconds(), "error": fmt.Sprint(err)})
			return last, err
		}
		if after > 0 {
			recheck.Reset(after)
		}
	}
}

// caughtUp says whether the informer's view includes this process's last write of the object:
// the object it holds is the one written, at that version or later, or it holds none (or
// another of that name) and has seen the API's changes past the write.
func caughtUp(o jobs.Observed, objects *sharedInformer, written *unstructured.Unstructured) bool {
	if written == nil {
		return true
	}
	if o.Object != nil && o.Object.GetUID() == written.GetUID() {
		return notOlder(o.Object.GetResourceVersion(), written.GetResourceVersion())
	}
	return notOlder(objects.LastSyncResourceVersion(), written.GetResourceVersion())
}

// snapshot is the target as the informers hold it now.
func snapshot(t Target, objects, pods *sharedInformer, podSelector labels.Selector, events *sharedInformer) (jobs.Observed, error) {
	var o jobs.Observed
	var err error
	if o.Object, err = objectIn(objects, t.Namespace, t.Name); err != nil {
		return o, err
	}
	if pods != nil {
		if o.Pods, err = podsMatching(pods.GetIndexer(), podSelector); err != nil {
			return o, err
		}
	}
	if events == nil {
		return o, nil
	}
	items, err := events.GetIndexer().ByIndex(byInvolved, t.Kind+"/"+t.Name)
	if err != nil {
		return o, err
	}
	o.Events = make([]corev1.Event, 0, len(items))
	for _, item := range items {
		e, ok := item.(*corev1.Event)
		if !ok {
			return o, fmt.Errorf("unexpected %T in the events informer", item)
		}
		o.Events = append(o.Events, *e)
	}
	return o, nil
}

func unstructuredItems(items []any) ([]unstructured.Unstructured, error) {
	out := make([]unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		u, err := heldObject(item)
		if err != nil {
			return nil, err
		}
		out = append(out, *u)
	}
	return out, nil
}
