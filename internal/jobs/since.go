package jobs

import (
	"fmt"
	"regexp"
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

// dispatchNeeds are, by kind, what a job that MultiKueue dispatches to worker clusters needs of
// its operator in the managing cluster: a release that leaves a job MultiKueue manages to it,
// told by a field of the operator's schema. training-operator before v1.9.0 has no
// runPolicy.managedBy, so Kueue cannot dispatch its jobs; Trainer v2.2.0 has spec.managedBy but
// its controller does not honour it, and would run the TrainJob in the managing cluster as well
// as in the worker (its runtime patch's grace period, from v2.3.0, marks the release that does).
var dispatchNeeds = map[schema.GroupVersionResource]FieldSince{
	PyTorch.GVR: {GVR: PyTorch.GVR, Kind: "PyTorchJob", Path: []string{"spec", "runPolicy", "managedBy"},
		Operator: "training-operator", Since: "v1.9.0", Without: "queue_name, or name a queue that dispatches to no worker cluster"},
	TF.GVR: {GVR: TF.GVR, Kind: "TFJob", Path: []string{"spec", "runPolicy", "managedBy"},
		Operator: "training-operator", Since: "v1.9.0", Without: "queue_name, or name a queue that dispatches to no worker cluster"},
	Train.GVR: {GVR: Train.GVR, Kind: "TrainJob", Path: fieldsSince[0].Path,
		Operator: "Kubeflow Trainer", Since: "v2.3.0", Without: "queue_name, or name a queue that dispatches to no worker cluster"},
}

// UnknownFieldsMessage says what the refusal of fields (as the API server names them,
// spec.a[0].b) by the schema the cluster serves for gvr tells of its operator's release: older
// than the release that added a field whose history the provider knows (fieldsSince), or, for any
// other field, older than the oldest release the provider supports or newer than the releases it
// is tested with, which may have removed or renamed it; and what to do.
func UnknownFieldsMessage(gvr schema.GroupVersionResource, fields []string) string {
	r, known := RequirementOf(gvr)
	if !known {
		r = Requirement{Operator: "the operator that serves " + gvr.GroupResource().String()}
	}
	for _, field := range fields {
		normal := listIndex.ReplaceAllString(field, "[*]")
		for _, f := range fieldsSince {
			if f.GVR == gvr && f.Field() == normal {
				return fmt.Sprintf("%s on the cluster is older than %s, which added %s (the provider is tested with %s): upgrade it, or remove %s. See %s",
					f.Operator, f.Since, f.Field(), r.Tested.Releases(), f.Without, RequirementsURL)
			}
		}
	}
	if !known {
		return fmt.Sprintf("The cluster's schema of %s lacks a field the provider writes: %s is older or newer than the provider expects. "+
			"Remove the attribute that sets the field. See %s", gvr.GroupResource(), r.Operator, RequirementsURL)
	}
	return fmt.Sprintf("The cluster's schema of %s lacks a field the provider writes: %s on the cluster is either older than %s, the "+
		"oldest release the provider supports, or newer than the releases it is tested with (the provider is tested with %s), which "+
		"may have removed or renamed the field. Run a tested release, or remove the attribute that sets the field. See %s",
		gvr.GroupResource(), r.Operator, r.Since, r.Tested.Releases(), RequirementsURL)
}

// listIndex is a list's index in a field's path as the API server names it.
var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// DispatchNeeds is what a job of gvr that MultiKueue dispatches needs of its operator's schema,
// if anything.
func DispatchNeeds(gvr schema.GroupVersionResource) (FieldSince, bool) {
	f, ok := dispatchNeeds[gvr]
	return f, ok
}

// trainerV23 is the field whose presence in the TrainJob schema shows Kubeflow Trainer v2.3.0 or
// later (the first entry of fieldsSince).
var trainerV23 = fieldsSince[0]

// TrainerMarker is the field of the TrainJob schema that shows Kubeflow Trainer v2.3.0 or later:
// v2.2.0 lacks it.
func TrainerMarker() FieldSince { return trainerV23 }

// ReplacedResources says whether obj, a TrainJob, sets its nodes' resources
// (trainer.resourcesPerNode), which Trainer before v2.3.0 puts in place of the runtime's rather
// than merging them in.
func ReplacedResources(obj *unstructured.Unstructured) bool {
	return hasPath(obj.Object, []string{"spec", "trainer", "resourcesPerNode"})
}
