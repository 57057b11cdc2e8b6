package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// UntilGone waits until the target object and all its pods no longer exist, and with t.UID
// known, everything of the resources t.Owns that it owned (see Target.Owns). It watches no
// events: they explain failures to run, not deletions. When the informers have never held the
// object (made a moment ago, and its creation not seen yet), one GET confirms it is gone.
//
// A pod on a node that is not Ready can never go by itself (no kubelet confirms its deletion),
// and under foreground deletion it holds its owner too. So once the object is gone or being
// deleted, pods past their grace period on nodes that are not Ready do not hold the wait: they
// are returned as left, for the node's lifecycle (or a person) to remove.
func (c *Client) UntilGone(ctx context.Context, t Target) (observed jobs.Observed, left []corev1.Pod, err error) {
	core, err := c.coreREST()
	if err != nil {
		return jobs.Observed{}, nil, err
	}
	seen := false
	gone := func(o jobs.Observed) (bool, error) {
		left = nil
		if o.Object != nil {
			seen = true
			if o.Object.GetDeletionTimestamp() == nil {
				return false, nil
			}
		}
		if len(o.Owned) > 0 {
			return false, nil // the garbage collector deletes them whatever the nodes' state
		}
		if len(o.Pods) == 0 {
			if o.Object != nil {
				return false, nil
			}
			if !seen {
				obj, err := c.Get(ctx, t)
				if err != nil || obj != nil {
					return false, err // an object still there raises an event when the informer sees it
				}
			}
			return true, nil
		}
		ready := map[string]bool{}
		for _, p := range o.Pods {
			if p.DeletionTimestamp == nil || p.DeletionTimestamp.After(time.Now()) || p.Spec.NodeName == "" {
				return false, nil
			}
			isReady, checked := ready[p.Spec.NodeName]
			if !checked {
				// A node that cannot be read now is taken for Ready: the next change or tick looks again.
				node, err := getCoreNode(ctx, core, p.Spec.NodeName)
				isReady = err == nil && kueue.NodeReady(*node) || err != nil && !apierrors.IsNotFound(err)
				ready[p.Spec.NodeName] = isReady
			}
			if isReady {
				return false, nil
			}
			left = append(left, p)
		}
		return true, nil
	}
	observed, err = c.until(ctx, t, func(o jobs.Observed) (bool, time.Duration, error) {
		done, err := gone(o)
		return done, 0, err
	}, waitOptions{tick: overdueTick, owned: true})
	return observed, left, err
}

// overdueTick is how often UntilGone looks again without a change: a pod that has outlived its
// grace period on a lost node raises no event.
const overdueTick = 2 * time.Second
