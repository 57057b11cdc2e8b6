package jobs

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FieldSince is a field the provider writes that an operator accepts only from a release on.
// An older release's CRD has no such field, and the API server drops what its schema lacks, so
// the job would run without it and every refresh would show it gone.
type FieldSince struct {
	GVR  schema.GroupVersionResource
	Kind string
	// Path is the field's path in the object; "*" stands for every item of a list.
	Path []string
	// Attribute is the provider's attribute that writes it.
	Attribute string
	// Operator is the operator's name; Since its first release with the field.
	Operator, Since string
	// Without says what to remove from the configuration to do without the field.
	Without string
}

// Field is the path as the API server names it: spec.a[*].b.
func (f FieldSince) Field() string {
	return strings.ReplaceAll(strings.Join(f.Path, "."), ".*", "[*]")
}

// fieldsSince are the fields of the oldest releases tested (README's Requirements) that the
// provider writes and that those releases lack.
var fieldsSince = []FieldSince{{
	// Trainer v2.2.0's PodSpec of a runtime patch has no terminationGracePeriodSeconds (v2.3.0
	// added it): the pods would get Kubernetes' 30 s whatever the plan said.
	GVR: Train.GVR, Kind: "TrainJob",
	Path: []string{"spec", "runtimePatches", "*", "trainingRuntimeSpec", "template", "spec", "replicatedJobs", "*",
		"template", "spec", "template", "spec", "terminationGracePeriodSeconds"},
	Attribute: "termination_grace_period_seconds",
	Operator:  "Kubeflow Trainer", Since: "v2.3.0",
	Without: "termination_grace_period_seconds and checkpoint (which sets it)",
}}

// FieldsSinceIn returns the fields of fieldsSince that obj, an object of gvr, sets.
func FieldsSinceIn(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) []FieldSince {
	var set []FieldSince
	for _, f := range fieldsSince {
		if f.GVR == gvr && hasPath(obj.Object, f.Path) {
			set = append(set, f)
		}
	}
	return set
}

// hasPath says whether v has a value at path, "*" matching any item of a list.
func hasPath(v any, path []string) bool {
	if len(path) == 0 {
		return v != nil
	}
	if path[0] == "*" {
		items, _ := v.([]any)
		for _, item := range items {
			if hasPath(item, path[1:]) {
				return true
			}
		}
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	next, ok := m[path[0]]
	return ok && hasPath(next, path[1:])
}
