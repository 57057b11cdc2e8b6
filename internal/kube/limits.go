package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What Kueue adds to a pod's requests before it counts them, read for the admission prediction:
// the LimitRanges of a job's namespace and the overhead of a RuntimeClass.
var (
	limitRangeGVR   = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
	runtimeClassGVR = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}
)

// SharedLimitRanges are the LimitRanges of a namespace, listed once per provider process
// (Client.limitRanges) within sharedNodesTimeout.
func (c *Client) SharedLimitRanges(ctx context.Context, namespace string) ([]corev1.LimitRange, error) {
	return c.limitRanges.get(ctx, namespace, func(ctx context.Context) ([]corev1.LimitRange, error) {
		ctx, cancel := context.WithTimeout(ctx, sharedNodesTimeout)
		defer cancel()
		list, err := c.List(ctx, limitRangeGVR, namespace, "")
		if err != nil {
			return nil, fmt.Errorf("listing the LimitRanges of namespace %s: %w", namespace, err)
		}
		var ranges []corev1.LimitRange
		for _, u := range list {
			var lr corev1.LimitRange
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &lr); err != nil {
				return nil, fmt.Errorf("reading LimitRange %s/%s: %w", namespace, u.GetName(), err)
			}
			ranges = append(ranges, lr)
		}
		return ranges, nil
	})
}

// RuntimeClassOverhead is the pod overhead a RuntimeClass adds (its overhead.podFixed), nil for
// none.
func (c *Client) RuntimeClassOverhead(ctx context.Context, name string) (corev1.ResourceList, error) {
	obj, err := c.Get(ctx, Target{GVR: runtimeClassGVR, Kind: "RuntimeClass", Name: name})
	if err != nil {
		return nil, fmt.Errorf("reading RuntimeClass %s: %w", name, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("RuntimeClass %s does not exist", name)
	}
	var rc nodev1.RuntimeClass
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &rc); err != nil {
		return nil, fmt.Errorf("reading RuntimeClass %s: %w", name, err)
	}
	if rc.Overhead == nil {
		return nil, nil
	}
	return rc.Overhead.PodFixed, nil
}
