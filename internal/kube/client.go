package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
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
	// core reads the core group's objects as typed objects over protobuf (coreClient).
	core rest.Interface
	// meta lists and watches objects' metadata alone (what a job owns, as destroy waits for it).
	meta metadata.Interface
	// raw reads lists as they stream in (listJSON).
	raw rest.Interface
	err error

	// What the plan's checks read of the cluster, each once for the whole provider process
	// (see shared.go): the nodes (SharedNodes), namespaces' labels and the server's version
	// (PodSecurity), LimitRanges (SharedLimitRanges), Kueue's queues and state (SharedQueues,
	// SharedQueueState) and configuration (KueueConfig).
	nodes           shared[struct{}, []corev1.Node]
	namespaceLabels shared[string, map[string]string]
	serverVersion   shared[struct{}, string]
	limitRanges     shared[string, []corev1.LimitRange]
	queues          shared[struct{}, *QueueState]
	queueState      shared[struct{}, *QueueState]
	kueueConfig     shared[struct{}, *kueue.Config]

	// The informers every wait of the process shares (see informers.go).
	informers informers
	// The lists every refresh of the process shares (see reads.go).
	lists sharedLists

	// What discovery said of each group version (Serves), and the OpenAPI v3 schemas of the
	// group versions HasField read.
	discoveries shared[schema.GroupVersion, served]
	schemas     shared[schema.GroupVersion, *spec3.OpenAPI]

	// workers are the MultiKueue worker clusters, by MultiKueueCluster name, where the copies
	// of the jobs Kueue dispatched run (see SetWorkers).
	workers map[string]*Client
}

// NewClient returns a client that connects on first use.
func NewClient(s Settings) *Client { return &Client{settings: s} }

// UnknownSettingsError is every call's error on a client whose settings are not known yet
// (Terraform plans with provider settings that come from resources the same apply makes).
type UnknownSettingsError struct{ Settings []string }

func (e *UnknownSettingsError) Error() string {
	return fmt.Sprintf("the provider settings %s are not known until apply (they come from resources this apply creates or changes), "+
		"so the cluster cannot be reached now; the KUBE_* environment is not used in their place, as it may name another cluster",
		strings.Join(e.Settings, ", "))
}

// NewUnknownClient returns a client that knows it cannot connect: names are the settings whose
// values are unknown. Every call fails with an UnknownSettingsError.
func NewUnknownClient(names []string) *Client {
	c := &Client{err: &UnknownSettingsError{Settings: names}}
	c.once.Do(func() {})
	return c
}

// UnknownSettings are the settings this client is waiting for, or nil.
func (c *Client) UnknownSettings() []string {
	var unknown *UnknownSettingsError
	if errors.As(c.err, &unknown) {
		return unknown.Settings
	}
	return nil
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
		if c.dyn, c.err = dynamic.NewForConfig(cfg); c.err != nil {
			return
		}
		if c.meta, c.err = metadata.NewForConfig(cfg); c.err != nil {
			return
		}
		if c.raw, c.err = rawClient(cfg); c.err != nil {
			return
		}
		c.core, c.err = coreClient(cfg)
	})
	return c.dyn, c.err
}

func (c *Client) coreREST() (rest.Interface, error) {
	if _, err := c.dynamic(); err != nil {
		return nil, err
	}
	return c.core, nil
}

// Target names a job object and how to find its pods and events.
type Target struct {
	GVR             schema.GroupVersionResource
	Kind            string
	Namespace, Name string
	PodSelector     string
	// JobName is the job whose pods PodSelector selects, when the target is not that job but
	// something it owns (an elastic job's Service); empty, it is Name.
	JobName string
	// BackgroundDeletion deletes the object at once and leaves its dependents to the garbage
	// collector (see jobs.Kind.Owns); otherwise deletion is foreground.
	BackgroundDeletion bool
	// Owns are the resources of what the object's controllers make for it, besides pods
	// (jobs.Kind.Owns). When UID is known, UntilGone also waits until nothing of those resources
	// that the object owned, directly or through one another, is left.
	Owns []schema.GroupVersionResource
	UID  types.UID
}

func (t Target) String() string { return fmt.Sprintf("%s %s/%s", t.Kind, t.Namespace, t.Name) }

// Get returns the object, or nil if it does not exist.
func (c *Client) Get(ctx context.Context, t Target) (*unstructured.Unstructured, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "GET "+t.String())
	var obj *unstructured.Unstructured
	err = retry(ctx, "GET "+t.String(), func() (err error) {
		obj, err = dyn.Resource(t.GVR).Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		return err
	})
	if err = c.explainNotFound(ctx, t.GVR, err); apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t, err)
	}
	return obj, nil
}

// Observe reads the object and its pods: one GET and one LIST, and one more LIST for the
// Workload of a job submitted to a Kueue queue. The pods of a job dispatched to a worker
// cluster the client knows are that cluster's (one more LIST there).
func (c *Client) Observe(ctx context.Context, t Target) (jobs.Observed, error) {
	return c.observe(ctx, t, false)
}

// observe is Observe, or with refresh, ReadObserved.
func (c *Client) observe(ctx context.Context, t Target, refresh bool) (jobs.Observed, error) {
	get, listPods, workload := c.Get, c.Pods, c.Workload
	if refresh {
		get, listPods, workload = c.Read, c.ReadPods, c.ReadWorkload
	}
	obj, err := get(ctx, t)
	if err != nil || obj == nil {
		return jobs.Observed{}, err
	}
	o := jobs.Observed{Object: obj}
	if jobs.QueueName(obj) != "" {
		if o.Workload, err = workload(ctx, obj); err != nil {
			return jobs.Observed{}, err
		}
	}
	if name := jobs.DispatchedTo(o); name != "" {
		// Its pods are in the worker cluster, or, if the provider was not given it, nowhere
		// this client can see: none here are the job's.
		w := c.Worker(name)
		if w == nil {
			return o, nil
		}
		listPods, t = w.Pods, WorkerCopy(t)
		if refresh {
			listPods = w.ReadPods
		}
	}
	if o.Pods, err = listPods(ctx, t); err != nil {
		return jobs.Observed{}, err
	}
	return o, nil
}

// List lists the objects of a kind in a namespace that match a label selector: one request.
func (c *Client) List(ctx context.Context, gvr schema.GroupVersionResource, namespace, labelSelector string) ([]unstructured.Unstructured, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "LIST "+gvr.Resource, map[string]any{"namespace": namespace, "selector": labelSelector})
	var list *unstructured.UnstructuredList
	err = retry(ctx, "LIST "+gvr.Resource, func() (err error) {
		list, err = dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: labelSelector})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s in %s: %w", gvr.Resource, namespace, err)
	}
	return list.Items, nil
}

// Names lists the names of the objects of a kind in a namespace.
func (c *Client) Names(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]string, error) {
	items, err := c.List(ctx, gvr, namespace, "")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(items))
	for _, item := range items {
		names = append(names, item.GetName())
	}
	sort.Strings(names)
	return names, nil
}

// Workload returns Kueue's Workload of a job object (found by the job's UID), or nil.
func (c *Client) Workload(ctx context.Context, job *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return c.workloadOf(ctx, job.GetNamespace(), job.GetName(), job.GetUID())
}

// workloadOf returns Kueue's Workload of the job with that UID, or nil: one LIST by Kueue's
// job-UID label.
func (c *Client) workloadOf(ctx context.Context, namespace, name string, uid types.UID) (*unstructured.Unstructured, error) {
	items, err := c.List(ctx, kueue.WorkloadGVR, namespace, kueue.JobUIDLabel+"="+string(uid))
	if err != nil {
		return nil, fmt.Errorf("reading the Kueue Workload of %s: %w", name, err)
	}
	return newestWorkload(items), nil
}

// newestWorkload is the newest of a job's Workloads (Kueue makes a new one when the job's pods
// change), nil if there is none.
func newestWorkload(items []unstructured.Unstructured) *unstructured.Unstructured {
	var newest metav1.Object
	at := -1
	for i := range items {
		if newerWorkload(&items[i], newest) {
			newest, at = &items[i], i
		}
	}
	if at < 0 {
		return nil
	}
	return &items[at]
}

// newerWorkload says whether wl, a Workload of a job, is to be read before newest, the newest
// of the job's seen so far (nil: none): it is not being deleted, and it was made after newest,
// or in the same second and first by name, as a list orders them.
func newerWorkload(wl, newest metav1.Object) bool {
	if wl.GetDeletionTimestamp() != nil {
		return false
	}
	if newest == nil {
		return true
	}
	made, newestMade := wl.GetCreationTimestamp(), newest.GetCreationTimestamp()
	return newestMade.Before(&made) || made.Equal(&newestMade) && wl.GetName() < newest.GetName()
}

// Pods lists the target's pods.
func (c *Client) Pods(ctx context.Context, t Target) ([]corev1.Pod, error) {
	core, err := c.coreREST()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "LIST pods of "+t.String(), map[string]any{"selector": t.PodSelector})
	pods, err := listPods(ctx, core, t.Namespace, t.PodSelector, "LIST pods of "+t.String())
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", t, err)
	}
	return pods, nil
}

// listPods lists the namespace's pods that selector matches (empty: all), retrying what is
// transient; what names the request in the retries' log.
func listPods(ctx context.Context, core rest.Interface, namespace, selector, what string) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	err := retry(ctx, what, func() error {
		pods = nil
		// In pages: the pods of one kind's jobs in a namespace may be thousands.
		p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return listCorePods(ctx, core, namespace, opts)
		})
		p.PageSize = podPageSize
		return p.EachListItemWithAlloc(ctx, metav1.ListOptions{LabelSelector: selector}, func(obj runtime.Object) error {
			if pod, ok := obj.(*corev1.Pod); ok {
				pods = append(pods, *slimPod(pod))
			}
			return nil
		})
	})
	return pods, err
}

// podPageSize is how many pods one LIST request of listPods asks for.
const podPageSize = 500

// Nodes lists the cluster's nodes matching a label selector (empty: all).
func (c *Client) Nodes(ctx context.Context, labelSelector string) ([]corev1.Node, error) {
	core, err := c.coreREST()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "LIST nodes", map[string]any{"selector": labelSelector})
	var list *corev1.NodeList
	err = retry(ctx, "LIST nodes", func() (err error) {
		list, err = listCoreNodes(ctx, core, metav1.ListOptions{LabelSelector: labelSelector})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	return list.Items, nil
}

// sharedNodesTimeout bounds SharedNodes' one attempt: a plan must not wait on a cluster that
// does not answer for a check it can do without.
const sharedNodesTimeout = 10 * time.Second

// SharedNodes lists the cluster's nodes once per provider process (one plan or apply) and
// hands every caller that list: a plan of many jobs makes one request. The one attempt is not
// retried, and its error is every caller's.
func (c *Client) SharedNodes(ctx context.Context) ([]corev1.Node, error) {
	return c.nodes.get(ctx, struct{}{}, func(ctx context.Context) ([]corev1.Node, error) {
		core, err := c.coreREST()
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, sharedNodesTimeout)
		defer cancel()
		tflog.Debug(ctx, "LIST nodes (shared)")
		list, err := listCoreNodes(ctx, core, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		return list.Items, nil
	})
}
