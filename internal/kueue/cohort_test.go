package kueue

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Cohort builds as Kueue's v1beta2 API takes it (parentName, resourceGroups, fairSharing) and
// reads back the same, its weight as written; one that sets nothing has an empty spec. Kueue's
// webhook rules are kept: limits need a parent, a weight is 0 or above 1n and not negative; a
// cohort may lend more than its own nominal quota (its subtree's), unlike a ClusterQueue.
func TestCohortRoundTripsAndKeepsKueuesRules(t *testing.T) {
	for _, s := range []CohortSpec{
		{Name: "research", Parent: "company", FairSharingWeight: "2",
			ResourceGroups: []ResourceGroup{{CoveredResources: []string{"nvidia.com/gpu"}, Flavors: []FlavorQuotas{
				{Name: "a100", Resources: []Quota{{Name: "nvidia.com/gpu", Nominal: "8", BorrowingLimit: "4", LendingLimit: "16"}}}}}}},
		{Name: "company"},
		{Name: "half", FairSharingWeight: "500m"},
		{Name: "zero", FairSharingWeight: "0"},
	} {
		obj, err := s.Build()
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if obj.GetKind() != "Cohort" || obj.GetNamespace() != "" {
			t.Errorf("%s built %v", s.Name, obj.Object)
		}
		if parent, _, _ := unstructured.NestedString(obj.Object, "spec", "parentName"); parent != s.Parent {
			t.Errorf("%s: spec.parentName %q", s.Name, parent)
		}
		if back := ReadCohort(obj); !reflect.DeepEqual(back, s) {
			t.Errorf("read back\n%+v\nwant\n%+v", back, s)
		}
	}
	quota := func(borrowing, lending string) []ResourceGroup {
		return []ResourceGroup{{CoveredResources: []string{"cpu"}, Flavors: []FlavorQuotas{
			{Name: "default", Resources: []Quota{{Name: "cpu", Nominal: "1", BorrowingLimit: borrowing, LendingLimit: lending}}}}}}
	}
	for _, bad := range []struct {
		spec CohortSpec
		want string
	}{
		{CohortSpec{Name: "loop", Parent: "loop"}, "names itself"},
		{CohortSpec{Name: "root", ResourceGroups: quota("1", "")}, "borrowing_limit needs a parent"},
		{CohortSpec{Name: "root", ResourceGroups: quota("", "1")}, "lending_limit needs a parent"},
		{CohortSpec{Name: "w", FairSharingWeight: "-1"}, "negative"},
		{CohortSpec{Name: "w", FairSharingWeight: "1n"}, "at most 1n"},
		{CohortSpec{Name: "w", FairSharingWeight: "heavy"}, "not a quantity"},
	} {
		if _, err := bad.spec.Build(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v; want an error saying %q", bad.spec, err, bad.want)
		}
	}
	if _, err := (ClusterQueueSpec{Name: "cq", FairSharingWeight: "-2"}).Build(); err == nil {
		t.Error("a ClusterQueue of a negative weight built")
	}
}
