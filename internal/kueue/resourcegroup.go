package kueue

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// What ClusterQueues and Cohorts share: resource groups of quotas per flavor, and a fair-sharing
// weight.

// Limits of a ClusterQueue's resource groups in Kueue v0.19.2: its CRD's list bounds
// (apis/kueue/v1beta2/clusterqueue_types.go) and its webhook's totals
// (pkg/webhooks/clusterqueue_webhook.go).
const (
	maxResourceGroups          = 16
	maxPerGroup                = 64 // covered resources, flavors, resources of a flavor
	maxFlavorsInAll            = 256
	maxCoveredInAll            = 256
	maxFlavorResourcesPerGroup = 512
)

// checkResourceGroups applies the rules Kueue v0.19.2 refuses a ClusterQueue's or Cohort's
// resource groups for (the CRD's bounds and CEL rules, and pkg/webhooks/clusterqueue_webhook.go's
// validateResourceGroups and validateLimit): limits need the cohort (a ClusterQueue's) or parent
// (a Cohort's) they borrow from and lend to, hasLender, named lender; a ClusterQueue lends at
// most its nominal quota (lendWithinNominal), a Cohort what its subtree holds.
func checkResourceGroups(groups []ResourceGroup, hasLender bool, lender string, lendWithinNominal bool) error {
	if len(groups) > maxResourceGroups {
		return fmt.Errorf("%d resource_group blocks: Kueue takes at most %d", len(groups), maxResourceGroups)
	}
	groupOf := map[string]int{}       // a covered resource's group: one group each
	flavorGroupOf := map[string]int{} // a flavor's group: one group each
	flavors, covered := 0, 0
	for i, g := range groups {
		if len(g.CoveredResources) > maxPerGroup || len(g.Flavors) > maxPerGroup {
			return fmt.Errorf("resource_group %d: %d covered_resources and %d flavors; Kueue takes at most %d of each", i, len(g.CoveredResources), len(g.Flavors), maxPerGroup)
		}
		flavors, covered = flavors+len(g.Flavors), covered+len(g.CoveredResources)
		if len(g.Flavors)*len(g.CoveredResources) > maxFlavorResourcesPerGroup {
			return fmt.Errorf("resource_group %d: %d flavors x %d covered_resources; Kueue takes at most %d flavor-resource quotas in a group",
				i, len(g.Flavors), len(g.CoveredResources), maxFlavorResourcesPerGroup)
		}
		for _, r := range g.CoveredResources {
			if errs := validation.IsQualifiedName(r); len(errs) > 0 {
				return fmt.Errorf("resource_group %d: covered resource %q is not a resource name: %s", i, r, strings.Join(errs, "; "))
			}
			if j, ok := groupOf[r]; ok && j != i {
				return fmt.Errorf("resource_group %d: %q is covered by resource_group %d too; Kueue wants each resource in one group", i, r, j)
			}
			groupOf[r] = i
		}
		for _, f := range g.Flavors {
			if j, ok := flavorGroupOf[f.Name]; ok {
				return fmt.Errorf("resource_group %d: flavor %q is in resource_group %d too; Kueue wants each flavor once, in one group", i, f.Name, j)
			}
			flavorGroupOf[f.Name] = i
		}
	}
	if flavors > maxFlavorsInAll || covered > maxCoveredInAll {
		return fmt.Errorf("%d flavors and %d covered resources in all; Kueue takes at most %d and %d", flavors, covered, maxFlavorsInAll, maxCoveredInAll)
	}
	for i, g := range groups {
		covered := map[string]bool{}
		for _, r := range g.CoveredResources {
			covered[r] = true
		}
		for _, f := range g.Flavors {
			if len(f.Resources) != len(g.CoveredResources) {
				return fmt.Errorf("resource_group %d, flavor %q: it must give a quota for each covered resource (%s), in that order",
					i, f.Name, strings.Join(g.CoveredResources, ", "))
			}
			for j, q := range f.Resources {
				if !covered[q.Name] {
					return fmt.Errorf("resource_group %d, flavor %q, resource %q: %w", i, f.Name, q.Name, errNoResourceGroupsCoverage)
				}
				if q.Name != g.CoveredResources[j] {
					return fmt.Errorf("resource_group %d, flavor %q: resource %d is %q, but Kueue wants the quotas in the order of covered_resources (%q there)",
						i, f.Name, j, q.Name, g.CoveredResources[j])
				}
				quantities := map[string]resource.Quantity{}
				for what, v := range map[string]string{"nominal_quota": q.Nominal, "borrowing_limit": q.BorrowingLimit, "lending_limit": q.LendingLimit} {
					if v == "" {
						continue
					}
					quantity, err := resource.ParseQuantity(v)
					if err != nil {
						return fmt.Errorf("resource_group %d, flavor %q, resource %q: %s %q is not a quantity: %v", i, f.Name, q.Name, what, v, err)
					}
					if quantity.Sign() < 0 {
						return fmt.Errorf("resource_group %d, flavor %q, resource %q: %s must not be negative", i, f.Name, q.Name, what)
					}
					quantities[what] = quantity
				}
				if q.BorrowingLimit != "" && !hasLender {
					return fmt.Errorf("resource_group %d, flavor %q, resource %q: borrowing_limit needs %s to borrow from", i, f.Name, q.Name, lender)
				}
				if q.LendingLimit != "" && !hasLender {
					return fmt.Errorf("resource_group %d, flavor %q, resource %q: lending_limit needs %s to lend to", i, f.Name, q.Name, lender)
				}
				if lend, ok := quantities["lending_limit"]; ok && lendWithinNominal && lend.Cmp(quantities["nominal_quota"]) > 0 {
					return fmt.Errorf("resource_group %d, flavor %q, resource %q: lending_limit %s is more than nominal_quota %s; Kueue lends at most what the queue has",
						i, f.Name, q.Name, q.LendingLimit, q.Nominal)
				}
			}
		}
	}
	return nil
}

// checkWeight applies Kueue v0.19.2's rule for a fair-sharing weight (pkg/webhooks/common.go,
// validateFairSharing): a quantity, not negative, and 0 (an infinite share) or more than 1n,
// which would collapse; "" is unset.
func checkWeight(w string) error {
	if w == "" {
		return nil
	}
	q, err := resource.ParseQuantity(w)
	switch {
	case err != nil:
		return fmt.Errorf("fair_sharing_weight %q is not a quantity: %v", w, err)
	case q.Sign() < 0:
		return fmt.Errorf("fair_sharing_weight %s is negative; Kueue takes 0 or more", w)
	case q.Sign() > 0 && q.Cmp(resource.MustParse("1n")) <= 0:
		return fmt.Errorf("fair_sharing_weight %s is at most 1n, which Kueue refuses: 0 (an infinite share) or more than 1n", w)
	}
	return nil
}

// buildResourceGroups is a ClusterQueue's or Cohort's spec.resourceGroups.
func buildResourceGroups(resourceGroups []ResourceGroup) []any {
	groups := make([]any, 0, len(resourceGroups))
	for _, g := range resourceGroups {
		flavors := make([]any, 0, len(g.Flavors))
		for _, f := range g.Flavors {
			quotas := make([]any, 0, len(f.Resources))
			for _, q := range f.Resources {
				m := map[string]any{"name": q.Name, "nominalQuota": q.Nominal}
				if q.BorrowingLimit != "" {
					m["borrowingLimit"] = q.BorrowingLimit
				}
				if q.LendingLimit != "" {
					m["lendingLimit"] = q.LendingLimit
				}
				quotas = append(quotas, m)
			}
			flavors = append(flavors, map[string]any{"name": f.Name, "resources": quotas})
		}
		groups = append(groups, map[string]any{"coveredResources": stringSlice(g.CoveredResources), "flavors": flavors})
	}
	return groups
}

// setWeight writes a fair-sharing weight into a ClusterQueue's or Cohort's spec; "" writes none.
func setWeight(spec map[string]any, w string) {
	if w != "" {
		spec["fairSharing"] = map[string]any{"weight": w}
	}
}

// readWeight reads a ClusterQueue's or Cohort's fair-sharing weight; "" for none.
func readWeight(spec map[string]any) string {
	w, _, _ := unstructured.NestedFieldNoCopy(spec, "fairSharing", "weight")
	return quantityString(w)
}
