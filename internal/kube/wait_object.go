package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// objectPoll is how often UntilObject reads its object again.
const objectPoll = 500 * time.Millisecond

// UntilObject reads the target object until done says so of it, and returns it then. It is for
// objects whose state a controller writes in their status (a Kueue queue's Active condition),
// which no pod or event of their own tells: a read every half second, not a watch. On timeout
// or cancellation it returns the object as last read with ErrWaitTimeout or ErrWaitInterrupted.
func (c *Client) UntilObject(ctx context.Context, t Target, done func(*unstructured.Unstructured) bool) (*unstructured.Unstructured, error) {
	ticker := time.NewTicker(objectPoll)
	defer ticker.Stop()
	var last *unstructured.Unstructured
	for {
		obj, err := c.Get(ctx, t)
		switch {
		case err != nil && ctx.Err() == nil:
			return last, err
		case err == nil && obj == nil:
			return last, fmt.Errorf("%s is gone", t)
		case err == nil:
			last = obj
			if done(obj) {
				return obj, nil
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return last, fmt.Errorf("%s: %w", t, ErrWaitTimeout)
			}
			return last, fmt.Errorf("%s: %w", t, ErrWaitInterrupted)
		case <-ticker.C:
		}
	}
}
