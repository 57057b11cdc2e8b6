package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// ErrWaitTimeout is wrapped by Until's error when its context's deadline passed.
var ErrWaitTimeout = errors.New("timed out")

// Until watches the target object, its pods and the events about it, and returns once check
// says done or fails. check sees a consistent snapshot after every change, so nothing is polled.
// On timeout or cancellation it returns the last snapshot with the error, so the caller can
// say why the job did not get there.
func (c *Client) Until(ctx context.Context, t Target, check func(jobs.Observed) (bool, error)) (jobs.Observed, error) {
	return c.until(ctx, t, check, true, 0)
}

// UntilGone waits until the target object and all its pods no longer exist. It watches no
// events: they explain failures to run, not deletions, and cost a LIST and a WATCH per job.
//
// A pod on a node that is not Ready can never go by itself (no kubelet confirms its deletion),
// and with foreground deletion it holds its job object too. So once the object is gone or being
// deleted, pods past their grace period on nodes that are not Ready do not hold the wait: they
// are returned as left, for the node's lifecycle (or a person) to remove.
func (c *Client) UntilGone(ctx context.Context, t Target) (observed jobs.Observed, left []corev1.Pod, err error) {
	core, err := c.coreClient()
	if err != nil {
		return jobs.Observed{}, nil, err
	}
	observed, err = c.until(ctx, t, func(o jobs.Observed) (bool, error) {
		left = nil
		if o.Object != nil && o.Object.GetDeletionTimestamp() == nil {
			return false, nil
		}
		if len(o.Pods) == 0 {
			return o.Object == nil, nil
		}
		ready := map[string]bool{}
		for _, p := range o.Pods {
			if p.DeletionTimestamp == nil || p.DeletionTimestamp.After(time.Now()) || p.Spec.NodeName == "" {
				return false, nil
			}
			isReady, checked := ready[p.Spec.NodeName]
			if !checked {
				// A node that cannot be read now is taken for Ready: the next change or tick looks again.
				node, err := core.Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
				isReady = err == nil && jobs.NodeReady(*node) || err != nil && !apierrors.IsNotFound(err)
				ready[p.Spec.NodeName] = isReady
			}
			if isReady {
				return false, nil
			}
			left = append(left, p)
		}
		return true, nil
	}, false, overdueTick)
	return observed, left, err
}

// overdueTick is how often UntilGone looks again without a change: a pod that has outlived its
// grace period on a lost node raises no event.
const overdueTick = 2 * time.Second

// until watches and calls check after every change, and every tick too when tick > 0.
func (c *Client) until(ctx context.Context, t Target, check func(jobs.Observed) (bool, error), withEvents bool, tick time.Duration) (jobs.Observed, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return jobs.Observed{}, err
	}
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
	watch := func(gvrInformer cache.SharedIndexInformer) (cache.SharedIndexInformer, error) {
		if _, err := gvrInformer.AddEventHandler(handler); err != nil {
			return nil, err
		}
		go gvrInformer.RunWithContext(ctx)
		return gvrInformer, nil
	}
	objects, err := watch(dynamicinformer.NewFilteredDynamicInformer(dyn, t.GVR, t.Namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", t.Name).String()
	}).Informer())
	if err != nil {
		return jobs.Observed{}, err
	}
	synced := []cache.InformerSynced{objects.HasSynced}
	// An object without pods (a Kueue queue) has no pod selector: no pods are watched.
	var pods cache.SharedIndexInformer
	if t.PodSelector != "" {
		pods, err = watch(dynamicinformer.NewFilteredDynamicInformer(dyn, podsGVR, t.Namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.LabelSelector = t.PodSelector
		}).Informer())
		if err != nil {
			return jobs.Observed{}, err
		}
		synced = append(synced, pods.HasSynced)
	}
	// A job submitted to a Kueue queue has its Workloads watched from the first sight of it,
	// selected by its UID.
	var workloads cache.SharedIndexInformer
	var events cache.SharedIndexInformer
	if withEvents {
		events, err = watch(dynamicinformer.NewFilteredDynamicInformer(dyn, eventsGVR, t.Namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.FieldSelector = t.eventSelector()
		}).Informer())
		if err != nil {
			return jobs.Observed{}, err
		}
		synced = append(synced, events.HasSynced)
	}

	tflog.Debug(ctx, "watching "+t.String())
	started := time.Now()
	var last jobs.Observed
	timedOut := func() error {
		err := ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s", ErrWaitTimeout, time.Since(started).Round(time.Second))
		}
		return err
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return last, timedOut()
	}
	notify() // check the initial state, even if it is empty and so raised no event
	var ticks <-chan time.Time
	if tick > 0 {
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		ticks = ticker.C
	}
	for {
		select {
		case <-changed:
		case <-ticks:
		case <-ctx.Done():
			return last, timedOut()
		}
		last, err = snapshot(objects, pods, events)
		if err != nil {
			return last, err
		}
		if workloads == nil && jobs.QueueName(last.Object) != "" {
			selector := workloadSelector(last.Object)
			if workloads, err = watch(dynamicinformer.NewFilteredDynamicInformer(dyn, kueue.WorkloadGVR, t.Namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
				o.LabelSelector = selector
			}).Informer()); err != nil {
				return last, err
			}
			if !cache.WaitForCacheSync(ctx.Done(), workloads.HasSynced) {
				return last, timedOut()
			}
		}
		if workloads != nil {
			items, err := unstructuredItems(workloads.GetStore().List())
			if err != nil {
				return last, err
			}
			last.Workload = newestWorkload(items)
		}
		done, err := check(last)
		if err != nil || done {
			tflog.Debug(ctx, "finished watching "+t.String(), map[string]any{"seconds": time.Since(started).Seconds(), "error": fmt.Sprint(err)})
			return last, err
		}
	}
}

func snapshot(objects, pods, events cache.SharedIndexInformer) (jobs.Observed, error) {
	var o jobs.Observed
	if items := objects.GetStore().List(); len(items) > 0 {
		obj, ok := items[0].(*unstructured.Unstructured)
		if !ok {
			return o, fmt.Errorf("unexpected %T in the informer's store", items[0])
		}
		o.Object = obj
	}
	if pods != nil {
		podItems, err := unstructuredItems(pods.GetStore().List())
		if err != nil {
			return o, err
		}
		if o.Pods, err = toPods(podItems); err != nil {
			return o, err
		}
	}
	if events == nil {
		return o, nil
	}
	eventItems, err := unstructuredItems(events.GetStore().List())
	if err != nil {
		return o, err
	}
	if o.Events, err = toEvents(eventItems); err != nil {
		return o, err
	}
	return o, nil
}

func unstructuredItems(items []any) ([]unstructured.Unstructured, error) {
	out := make([]unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		u, ok := item.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("unexpected %T in the informer's store", item)
		}
		out = append(out, *u)
	}
	return out, nil
}
