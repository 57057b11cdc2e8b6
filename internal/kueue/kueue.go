// Package kueue translates plain-Go specs of Kueue's quota objects (ResourceFlavor,
// ClusterQueue, LocalQueue) into the objects of Kueue's v1beta2 API and back, and reads what a
// job's Workload says about its admission. It makes no API call and knows nothing of Terraform.
package kueue

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// Group and Version are the API Kueue v0.15+ stores its objects in.
	Group   = "kueue.x-k8s.io"
	Version = "v1beta2"
	// JobUIDLabel is the label Kueue puts on a job's Workload, holding the job's UID.
	JobUIDLabel = "kueue.x-k8s.io/job-uid"
)

// The APIs of Kueue's objects.
var (
	ResourceFlavorGVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "resourceflavors"}
	ClusterQueueGVR   = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "clusterqueues"}
	LocalQueueGVR     = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "localqueues"}
	WorkloadGVR       = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "workloads"}
)

// Values Kueue's API accepts, the first of each its default.
var (
	QueueingStrategies          = []string{"BestEffortFIFO", "StrictFIFO"}
	StopPolicies                = []string{"None", "Hold", "HoldAndDrain"}
	ReclaimPolicies             = []string{"Never", "LowerPriority", "Any"}
	WithinClusterQueuePolicies  = []string{"Never", "LowerPriority", "LowerOrNewerEqualPriority"}
	BorrowWithinCohortPolicies  = []string{"Never", "LowerPriority"}
	defaultQueueingStrategy     = QueueingStrategies[0]
	defaultStopPolicy           = StopPolicies[0]
	defaultPreemptionPolicy     = "Never"
	defaultBorrowWithinCohort   = BorrowWithinCohortPolicies[0]
	errNoResourceGroupsCoverage = fmt.Errorf("every resource of a flavor must be one of its resource group's covered_resources")
)

func newObject(kind, name, namespace string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(Group + "/" + Version)
	obj.SetKind(kind)
	obj.SetName(name)
	if namespace != "" {
		obj.SetNamespace(namespace)
	}
	return obj
}

func condition(obj *unstructured.Unstructured, kind string) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == kind {
			return m
		}
	}
	return nil
}

// count reads a number the API server's JSON gives as an int64 (and YAML as a float64).
func count(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// quantityString reads a quantity the API server returns as a string or, for small integers
// written as numbers, as an int64.
func quantityString(v any) string {
	switch q := v.(type) {
	case string:
		return q
	case int64:
		return fmt.Sprint(q)
	case float64:
		return fmt.Sprint(q)
	}
	return ""
}

func stringMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func stringSlice(in []string) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}

// toJSON turns typed API values (taints, tolerations) into the unstructured form.
func toJSON[T any](items []T) []any {
	out := make([]any, 0, len(items))
	for i := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&items[i])
		if err != nil {
			panic(fmt.Sprintf("converting %T: %v", items[i], err)) // only API types come here
		}
		out = append(out, m)
	}
	return out
}

// fromJSON reads a list of typed API values at path.
func fromJSON[T any](obj map[string]any, into *[]T, path ...string) error {
	items, _, err := unstructured.NestedSlice(obj, path...)
	if err != nil {
		return err
	}
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not an object", strings.Join(path, "."))
		}
		var v T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &v); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(path, "."), err)
		}
		*into = append(*into, v)
	}
	return nil
}
