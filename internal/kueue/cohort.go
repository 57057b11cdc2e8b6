package kueue

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CohortGVR is the API of Kueue's Cohorts (cluster-scoped): a node of the tree ClusterQueues
// borrow and lend in, with quotas and a fair-sharing weight of its own.
var CohortGVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "cohorts"}

// Check applies the rules Kueue v0.19.2 refuses a Cohort for (apis/kueue/v1beta2/cohort_types.go
// and pkg/webhooks/cohort_webhook.go): its resource groups as a ClusterQueue's, but with limits
// needing a parent rather than a cohort, and a lending limit that may exceed its nominal quota
// (a cohort lends what its subtree holds); its fair-sharing weight as a ClusterQueue's. A cohort
// that is its own parent is refused too: Kueue would take it, and admit nothing below it.
func (s CohortSpec) Check() error {
	if s.Parent != "" && s.Parent == s.Name {
		return fmt.Errorf("cohort %s names itself as its parent: Kueue would admit nothing to the ClusterQueues below it", s.Name)
	}
	if err := checkResourceGroups(s.ResourceGroups, s.Parent != "", "a parent", false); err != nil {
		return err
	}
	return checkWeight(s.FairSharingWeight)
}

// Build returns the Cohort; only what the spec sets is written (Kueue defaults nothing of a
// Cohort's spec but the weight inside a fairSharing block, which is written whole).
func (s CohortSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("Cohort", s.Name, "")
	spec := map[string]any{}
	if s.Parent != "" {
		spec["parentName"] = s.Parent
	}
	if len(s.ResourceGroups) > 0 {
		spec["resourceGroups"] = buildResourceGroups(s.ResourceGroups)
	}
	setWeight(spec, s.FairSharingWeight)
	obj.Object["spec"] = spec
	return obj, nil
}
