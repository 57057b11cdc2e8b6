package kueue

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Capacity on demand: an AdmissionCheck of Kueue's provisioning controller, whose parameters are
// a ProvisioningRequestConfig, makes a ProvisioningRequest (autoscaling.x-k8s.io) for each
// workload its ClusterQueue gives quota to, and admits the workload once the cluster's autoscaler
// (cluster-autoscaler, GKE's Dynamic Workload Scheduler) says the capacity is provisioned.

// ProvisioningRequestConfigGVR is the API of Kueue's ProvisioningRequestConfigs (cluster-scoped).
var ProvisioningRequestConfigGVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "provisioningrequestconfigs"}

// ProvisioningController is the controllerName of an AdmissionCheck of Kueue's provisioning
// controller (apis/kueue/v1beta2/provisioningrequestconfig_types.go).
const ProvisioningController = "kueue.x-k8s.io/provisioning-request"

// PodSetMergePolicies are the values of a ProvisioningRequestConfig's podSetMergePolicy.
var PodSetMergePolicies = []string{"IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"}

// Kueue v0.19.2's defaults of a ProvisioningRequestConfig's retryStrategy.
const (
	DefaultRetryLimit       = 3
	DefaultRetryBaseSeconds = 60
	DefaultRetryMaxSeconds  = 1800
)

// ProvisioningRequestConfigSpec is a ProvisioningRequestConfig: the provisioning class the
// autoscaler serves (check-capacity.autoscaling.x-k8s.io, queued-provisioning.gke.io, ...) with
// its parameters, the resources it provisions (none: all), how often a failed request is tried
// again, the node labels the provisioned capacity gives the pods, and which pod sets one
// request merges.
type ProvisioningRequestConfigSpec struct {
	Name, ProvisioningClass string
	Parameters              map[string]string
	ManagedResources        []string
	// RetryLimit is how many times a failed request is made again (0: never), after
	// RetryBaseSeconds doubled at each try, up to RetryMaxSeconds.
	RetryLimit, RetryBaseSeconds, RetryMaxSeconds int32
	// NodeSelector gives each pod set the node label KEY with the value of the provisioned
	// request's class detail named here (podSetUpdates.nodeSelector).
	NodeSelector      map[string]string
	PodSetMergePolicy string
}

// Check applies the rules of Kueue v0.19.2's CRD (apis/kueue/v1beta2/provisioningrequestconfig_types.go):
// a class name that is a DNS subdomain, at most 100 parameters of at most 255 characters, at most
// 100 managed resources, at most 8 node labels whose keys are label keys and whose detail names
// are 1 to 32768 characters, and a known merge policy. Negative retry figures, which mean
// nothing, are refused too.
func (s ProvisioningRequestConfigSpec) Check() error {
	if errs := validation.IsDNS1123Subdomain(s.ProvisioningClass); len(errs) > 0 {
		return fmt.Errorf("provisioning_class %q: %s", s.ProvisioningClass, strings.Join(errs, "; "))
	}
	if len(s.Parameters) > 100 {
		return fmt.Errorf("%d parameters: Kueue takes at most 100", len(s.Parameters))
	}
	for k, v := range s.Parameters {
		if len(v) > 255 {
			return fmt.Errorf("parameter %q has %d characters: Kueue takes at most 255", k, len(v))
		}
	}
	if len(s.ManagedResources) > 100 {
		return fmt.Errorf("%d managed_resources: Kueue takes at most 100", len(s.ManagedResources))
	}
	for i, r := range s.ManagedResources {
		if errs := validation.IsQualifiedName(r); len(errs) > 0 {
			return fmt.Errorf("managed resource %q is not a resource name: %s", r, strings.Join(errs, "; "))
		}
		if slices.Index(s.ManagedResources, r) != i {
			return fmt.Errorf("managed resource %q is listed twice", r)
		}
	}
	if len(s.NodeSelector) > 8 {
		return fmt.Errorf("%d node_selector entries: Kueue takes at most 8", len(s.NodeSelector))
	}
	for k, v := range s.NodeSelector {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("node_selector key %q is not a label key: %s", k, strings.Join(errs, "; "))
		}
		if len(v) == 0 || len(v) > 32768 {
			return fmt.Errorf("node_selector %q: the class detail's name must have 1 to 32768 characters", k)
		}
	}
	if s.PodSetMergePolicy != "" && !slices.Contains(PodSetMergePolicies, s.PodSetMergePolicy) {
		return fmt.Errorf("pod_set_merge_policy %q is none of %s", s.PodSetMergePolicy, strings.Join(PodSetMergePolicies, ", "))
	}
	if s.RetryLimit < 0 || s.RetryBaseSeconds < 0 || s.RetryMaxSeconds < 0 {
		return fmt.Errorf("the retry figures must not be negative (0 retries: none)")
	}
	return nil
}

// Build returns the ProvisioningRequestConfig, its retry strategy written out whole so that it
// reads back as written.
func (s ProvisioningRequestConfigSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("ProvisioningRequestConfig", s.Name, "")
	spec := map[string]any{
		"provisioningClassName": s.ProvisioningClass,
		"retryStrategy": map[string]any{"backoffLimitCount": int64(s.RetryLimit), "backoffBaseSeconds": int64(s.RetryBaseSeconds),
			"backoffMaxSeconds": int64(s.RetryMaxSeconds)},
	}
	if len(s.Parameters) > 0 {
		spec["parameters"] = stringMap(s.Parameters)
	}
	if len(s.ManagedResources) > 0 {
		spec["managedResources"] = stringSlice(s.ManagedResources)
	}
	if len(s.NodeSelector) > 0 {
		var entries []any
		for _, k := range slices.Sorted(maps.Keys(s.NodeSelector)) {
			entries = append(entries, map[string]any{"key": k, "valueFromProvisioningClassDetail": s.NodeSelector[k]})
		}
		spec["podSetUpdates"] = map[string]any{"nodeSelector": entries}
	}
	if s.PodSetMergePolicy != "" {
		spec["podSetMergePolicy"] = s.PodSetMergePolicy
	}
	obj.Object["spec"] = spec
	return obj, nil
}

// ReadProvisioningRequestConfig reads a ProvisioningRequestConfig back; a retry figure it leaves
// out is Kueue's default.
func ReadProvisioningRequestConfig(obj *unstructured.Unstructured) ProvisioningRequestConfigSpec {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	s := ProvisioningRequestConfigSpec{Name: obj.GetName(), ProvisioningClass: str(spec, "provisioningClassName"),
		PodSetMergePolicy: str(spec, "podSetMergePolicy"), RetryLimit: DefaultRetryLimit, RetryBaseSeconds: DefaultRetryBaseSeconds,
		RetryMaxSeconds: DefaultRetryMaxSeconds}
	s.Parameters, _, _ = unstructured.NestedStringMap(spec, "parameters")
	s.ManagedResources, _, _ = unstructured.NestedStringSlice(spec, "managedResources")
	retry, _, _ := unstructured.NestedMap(spec, "retryStrategy")
	for key, into := range map[string]*int32{"backoffLimitCount": &s.RetryLimit, "backoffBaseSeconds": &s.RetryBaseSeconds, "backoffMaxSeconds": &s.RetryMaxSeconds} {
		if v, ok, _ := unstructured.NestedInt64(retry, key); ok {
			*into = int32(v)
		}
	}
	entries, _, _ := unstructured.NestedSlice(spec, "podSetUpdates", "nodeSelector")
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if s.NodeSelector == nil {
			s.NodeSelector = map[string]string{}
		}
		s.NodeSelector[str(m, "key")] = str(m, "valueFromProvisioningClassDetail")
	}
	return s
}
