package kube

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// FieldManager is the name this provider's writes are recorded under in managedFields.
const FieldManager = "terraform-provider-training"

var (
	podsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}
)

// Client talks to one cluster. It is built from the provider's settings on first use, not in
// Configure, so that validate and a plan that only creates jobs need no reachable cluster.
type Client struct {
	settings Settings

	once sync.Once
	dyn  dynamic.Interface
	err  error
}

// NewClient returns a client that connects on first use.
func NewClient(s Settings) *Client { return &Client{settings: s} }

// NewClientFor wraps an existing dynamic client (tests).
func NewClientFor(dyn dynamic.Interface) *Client {
	c := &Client{dyn: dyn}
	c.once.Do(func() {})
	return c
}

func (c *Client) dynamic() (dynamic.Interface, error) {
	c.once.Do(func() {
		cfg, err := c.settings.RESTConfig()
		if err != nil {
			c.err = err
			return
		}
		cfg.UserAgent = FieldManager
		// Terraform already bounds concurrency (-parallelism, 10 by default) and the API server
		// protects itself with priority and fairness; client-go's token bucket (5 QPS by default,
		// measured at 50 QPS: 6 of the 7 s of rescaling 100 jobs) would only add waiting.
		cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
		c.dyn, c.err = dynamic.NewForConfig(cfg)
	})
	return c.dyn, c.err
}

// Target names a job object and how to find its pods and events.
type Target struct {
	GVR             schema.GroupVersionResource
	Kind            string
	Namespace, Name string
	PodSelector     string
}

func (t Target) String() string { return fmt.Sprintf("%s %s/%s", t.Kind, t.Namespace, t.Name) }

// Get returns the object, or nil if it does not exist.
func (c *Client) Get(ctx context.Context, t Target) (*unstructured.Unstructured, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "GET "+t.String())
	obj, err := dyn.Resource(t.GVR).Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t, err)
	}
	return obj, nil
}

// Observe reads the object and its pods: one GET and one LIST.
func (c *Client) Observe(ctx context.Context, t Target) (jobs.Observed, error) {
	obj, err := c.Get(ctx, t)
	if err != nil || obj == nil {
		return jobs.Observed{}, err
	}
	pods, err := c.Pods(ctx, t)
	if err != nil {
		return jobs.Observed{}, err
	}
	return jobs.Observed{Object: obj, Pods: pods}, nil
}

// Pods lists the target's pods.
func (c *Client) Pods(ctx context.Context, t Target) ([]corev1.Pod, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "LIST pods of "+t.String(), map[string]any{"selector": t.PodSelector})
	list, err := dyn.Resource(podsGVR).Namespace(t.Namespace).List(ctx, metav1.ListOptions{LabelSelector: t.PodSelector})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", t, err)
	}
	return toPods(list.Items)
}

// Events lists the events about the target object.
func (c *Client) Events(ctx context.Context, t Target) ([]corev1.Event, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	list, err := dyn.Resource(eventsGVR).Namespace(t.Namespace).List(ctx, metav1.ListOptions{FieldSelector: t.eventSelector()})
	if err != nil {
		return nil, fmt.Errorf("listing the events of %s: %w", t, err)
	}
	return toEvents(list.Items)
}

func (t Target) eventSelector() string {
	return fields.Set{"involvedObject.kind": t.Kind, "involvedObject.name": t.Name}.String()
}

// Create creates obj; it fails if an object of that name exists.
func (c *Client) Create(ctx context.Context, t Target, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "CREATE "+t.String())
	created, err := dyn.Resource(t.GVR).Namespace(t.Namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", t, err)
	}
	return created, nil
}

// Patch applies a patch to the target object.
func (c *Client) Patch(ctx context.Context, t Target, pt types.PatchType, patch []byte) (*unstructured.Unstructured, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "PATCH "+t.String(), map[string]any{"patch": string(patch)})
	obj, err := dyn.Resource(t.GVR).Namespace(t.Namespace).Patch(ctx, t.Name, pt, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, fmt.Errorf("patching %s: %w", t, err)
	}
	return obj, nil
}

// Delete deletes the target with foreground propagation, so the object stays visible until the
// garbage collector has removed its pods and other dependants. NotFound is success.
func (c *Client) Delete(ctx context.Context, t Target) error {
	dyn, err := c.dynamic()
	if err != nil {
		return err
	}
	tflog.Debug(ctx, "DELETE "+t.String())
	foreground := metav1.DeletePropagationForeground
	err = dyn.Resource(t.GVR).Namespace(t.Namespace).Delete(ctx, t.Name, metav1.DeleteOptions{PropagationPolicy: &foreground})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", t, err)
	}
	return nil
}

func toPods(items []unstructured.Unstructured) ([]corev1.Pod, error) {
	pods := make([]corev1.Pod, len(items))
	for i := range items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &pods[i]); err != nil {
			return nil, err
		}
	}
	return pods, nil
}

func toEvents(items []unstructured.Unstructured) ([]corev1.Event, error) {
	events := make([]corev1.Event, len(items))
	for i := range items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &events[i]); err != nil {
			return nil, err
		}
	}
	return events, nil
}

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// Nodes lists the cluster's nodes matching a label selector (empty: all).
func (c *Client) Nodes(ctx context.Context, labelSelector string) ([]corev1.Node, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "LIST nodes", map[string]any{"selector": labelSelector})
	list, err := dyn.Resource(nodesGVR).List(ctx, metav1.ListOptions{LabelSelector: labelSelector})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	nodes := make([]corev1.Node, len(list.Items))
	for i := range list.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &nodes[i]); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}
