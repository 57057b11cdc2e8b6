package kueue

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WorkloadPriorityClassGVR is the API of Kueue's WorkloadPriorityClasses (cluster-scoped): a
// priority for Kueue's queueing and preemption, apart from the pods' PriorityClass.
var WorkloadPriorityClassGVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "workloadpriorityclasses"}

// maxPriorityDescription bounds a WorkloadPriorityClass's description in Kueue v0.19.2's CRD.
const maxPriorityDescription = 2048

// WorkloadPriorityClassSpec is a WorkloadPriorityClass: its value, which the Workloads of the
// jobs that name it get when they are made (a change reaches only the Workloads made after it),
// and a description of when to use it.
type WorkloadPriorityClassSpec struct {
	Name        string
	Value       int64
	Description string
}

// Check applies the rules Kueue v0.19.2's CRD refuses a WorkloadPriorityClass for
// (apis/kueue/v1beta2/workloadpriorityclass_types.go): a 32-bit value and a description of at
// most 2048 characters.
func (s WorkloadPriorityClassSpec) Check() error {
	if s.Value < math.MinInt32 || s.Value > math.MaxInt32 {
		return fmt.Errorf("value %d is out of Kueue's range, a 32-bit integer (%d to %d)", s.Value, math.MinInt32, math.MaxInt32)
	}
	if n := len([]rune(s.Description)); n > maxPriorityDescription {
		return fmt.Errorf("description has %d characters; Kueue takes at most %d", n, maxPriorityDescription)
	}
	return nil
}

// Build returns the WorkloadPriorityClass. Its value and description are top-level fields.
func (s WorkloadPriorityClassSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("WorkloadPriorityClass", s.Name, "")
	obj.Object["value"] = s.Value
	if s.Description != "" {
		obj.Object["description"] = s.Description
	}
	return obj, nil
}

// ReadWorkloadPriorityClass reads a WorkloadPriorityClass back.
func ReadWorkloadPriorityClass(obj *unstructured.Unstructured) (WorkloadPriorityClassSpec, error) {
	s := WorkloadPriorityClassSpec{Name: obj.GetName()}
	value, found, err := unstructured.NestedInt64(obj.Object, "value")
	if err != nil || !found {
		return s, fmt.Errorf("WorkloadPriorityClass %s has no value (%v)", obj.GetName(), err)
	}
	s.Value = value
	s.Description, _, _ = unstructured.NestedString(obj.Object, "description")
	return s, nil
}
