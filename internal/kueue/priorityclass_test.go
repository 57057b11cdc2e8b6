package kueue

import (
	"math"
	"strings"
	"testing"
)

// A WorkloadPriorityClass builds as Kueue's CRD takes it (value and description at the top level)
// and reads back the same; Kueue's bounds refuse what its CRD would.
func TestWorkloadPriorityClassRoundTripsAndKeepsKueuesBounds(t *testing.T) {
	for _, s := range []WorkloadPriorityClassSpec{
		{Name: "production", Value: 10000, Description: "jobs a release waits for"},
		{Name: "low", Value: -5},
		{Name: "max", Value: math.MaxInt32},
	} {
		obj, err := s.Build()
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if _, hasSpec := obj.Object["spec"]; hasSpec || obj.GetKind() != "WorkloadPriorityClass" || obj.GetNamespace() != "" {
			t.Errorf("%+v built %v", s, obj.Object)
		}
		back, err := ReadWorkloadPriorityClass(obj)
		if err != nil || back != s {
			t.Errorf("%+v read back as %+v (%v)", s, back, err)
		}
	}
	for _, bad := range []WorkloadPriorityClassSpec{
		{Name: "big", Value: math.MaxInt32 + 1},
		{Name: "small", Value: math.MinInt32 - 1},
		{Name: "long", Value: 1, Description: strings.Repeat("x", 2049)},
	} {
		if _, err := bad.Build(); err == nil {
			t.Errorf("%s built; Kueue refuses it", bad.Name)
		}
	}
}
