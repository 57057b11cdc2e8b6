package kueue

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// ClusterQueueSpec is a ClusterQueue: quotas per flavor, the cohort it borrows and lends in, and
// how it preempts.
type ClusterQueueSpec struct {
	Name   string
	Cohort string
	// NamespaceSelector are the labels a namespace must have for its LocalQueues to submit
	// here; empty means every namespace.
	NamespaceSelector map[string]string
	// Namespaces is the whole namespace selector as Kueue reads it (ReadClusterQueue: a queue
	// without one admits from no namespace); nil for a spec not read, whose NamespaceSelector
	// alone says.
	Namespaces       labels.Selector
	QueueingStrategy string
	StopPolicy       string
	ResourceGroups   []ResourceGroup
	Preemption       Preemption
	// AdmissionChecks are the AdmissionChecks every workload of the queue must pass once it has
	// its quota, by name (spec.admissionChecksStrategy): a MultiKueue check dispatches it to a
	// worker cluster.
	AdmissionChecks []string
	// FairSharingWeight is the queue's fair-sharing weight (spec.fairSharing.weight), a quantity;
	// "" unset (Kueue's 1).
	FairSharingWeight string
}

// ResourceGroup is a set of resources whose quotas are given together, per flavor, in order of
// preference.
type ResourceGroup struct {
	CoveredResources []string
	Flavors          []FlavorQuotas
}

// FlavorQuotas are one flavor's quotas in a resource group.
type FlavorQuotas struct {
	Name      string
	Resources []Quota
}

// Quota is one resource's quota; an empty limit is unset (no limit).
type Quota struct {
	Name           string
	Nominal        string
	BorrowingLimit string
	LendingLimit   string
}

// Preemption is when the queue's workloads may preempt others.
type Preemption struct {
	ReclaimWithinCohort string
	WithinClusterQueue  string
	BorrowWithinCohort  string
	// MaxPriorityThreshold bounds the priority of what BorrowWithinCohort may preempt; nil: no bound.
	MaxPriorityThreshold *int32
}

// maxAdmissionChecks bounds a ClusterQueue's admission checks in Kueue v0.19.2's CRD.
const maxAdmissionChecks = 64

// Check applies the rules Kueue v0.19.2 refuses a ClusterQueue for (its CRD's bounds and CEL
// rules, and its webhook), so that a plan says so and nothing is sent that would be refused.
func (s ClusterQueueSpec) Check() error {
	if len(s.AdmissionChecks) > maxAdmissionChecks {
		return fmt.Errorf("%d admission_checks: Kueue takes at most %d", len(s.AdmissionChecks), maxAdmissionChecks)
	}
	for i, c := range s.AdmissionChecks {
		if slices.Index(s.AdmissionChecks, c) != i {
			return fmt.Errorf("admission check %q is listed twice; Kueue keys the checks by name", c)
		}
	}
	if err := checkResourceGroups(s.ResourceGroups, s.Cohort != "", "a cohort", true); err != nil {
		return err
	}
	if err := checkWeight(s.FairSharingWeight); err != nil {
		return err
	}
	if p := s.Preemption; p.ReclaimWithinCohort == "Never" && p.BorrowWithinCohort != "" && p.BorrowWithinCohort != "Never" {
		return fmt.Errorf("preemption: borrow_within_cohort = %q needs reclaim_within_cohort other than \"Never\" (Kueue refuses reclaimWithinCohort=Never with a borrowWithinCohort policy)",
			p.BorrowWithinCohort)
	}
	return nil
}

// Build returns the ClusterQueue. Every defaulted field is written out, so the object reads
// back as it was written.
func (s ClusterQueueSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("ClusterQueue", s.Name, "")
	selector := map[string]any{}
	if len(s.NamespaceSelector) > 0 {
		selector["matchLabels"] = stringMap(s.NamespaceSelector)
	}
	borrow := map[string]any{"policy": cmp.Or(s.Preemption.BorrowWithinCohort, defaultBorrowWithinCohort)}
	if s.Preemption.MaxPriorityThreshold != nil {
		borrow["maxPriorityThreshold"] = int64(*s.Preemption.MaxPriorityThreshold)
	}
	spec := map[string]any{
		"namespaceSelector": selector,
		"queueingStrategy":  cmp.Or(s.QueueingStrategy, defaultQueueingStrategy),
		"stopPolicy":        cmp.Or(s.StopPolicy, defaultStopPolicy),
		"resourceGroups":    buildResourceGroups(s.ResourceGroups),
		"preemption": map[string]any{
			"reclaimWithinCohort": cmp.Or(s.Preemption.ReclaimWithinCohort, defaultPreemptionPolicy),
			"withinClusterQueue":  cmp.Or(s.Preemption.WithinClusterQueue, defaultPreemptionPolicy),
			"borrowWithinCohort":  borrow,
		},
	}
	if s.Cohort != "" {
		spec["cohortName"] = s.Cohort
	}
	setWeight(spec, s.FairSharingWeight)
	if len(s.AdmissionChecks) > 0 {
		checks := make([]any, len(s.AdmissionChecks))
		for i, c := range s.AdmissionChecks {
			checks[i] = map[string]any{"name": c}
		}
		spec["admissionChecksStrategy"] = map[string]any{"admissionChecks": checks}
	}
	obj.Object["spec"] = spec
	return obj, nil
}

// ReadClusterQueue reads a ClusterQueue back, whole. What the provider's resource cannot say (a
// namespace selector with expressions, or none, an admission check on some flavors) is the
// error, beside the spec read in full, which Kueue's scheduling model takes as it is.
func ReadClusterQueue(obj *unstructured.Unstructured) (ClusterQueueSpec, error) {
	s := ClusterQueueSpec{Name: obj.GetName()}
	var unsaid []error
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	s.Cohort, _, _ = unstructured.NestedString(spec, "cohortName")
	s.QueueingStrategy = cmp.Or(str(spec, "queueingStrategy"), defaultQueueingStrategy)
	s.StopPolicy = cmp.Or(str(spec, "stopPolicy"), defaultStopPolicy)
	if sel, ok := spec["namespaceSelector"].(map[string]any); ok {
		var selector metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &selector); err != nil {
			return s, fmt.Errorf("ClusterQueue %s: namespaceSelector: %w", s.Name, err)
		}
		var err error
		if s.Namespaces, err = metav1.LabelSelectorAsSelector(&selector); err != nil {
			return s, fmt.Errorf("ClusterQueue %s: namespaceSelector: %w", s.Name, err)
		}
		s.NamespaceSelector = selector.MatchLabels
		if len(selector.MatchExpressions) > 0 {
			unsaid = append(unsaid, fmt.Errorf("ClusterQueue %s selects namespaces with matchExpressions, which namespace_selector cannot say", s.Name))
		}
	} else {
		// Kueue: no selector at all matches no namespace.
		s.Namespaces = labels.Nothing()
		unsaid = append(unsaid, fmt.Errorf("ClusterQueue %s has no namespaceSelector (it admits from no namespace), which namespace_selector cannot say", s.Name))
	}
	s.ResourceGroups = readResourceGroups(spec)
	s.FairSharingWeight = readWeight(spec)
	p, _, _ := unstructured.NestedMap(spec, "preemption")
	s.Preemption.ReclaimWithinCohort = cmp.Or(str(p, "reclaimWithinCohort"), defaultPreemptionPolicy)
	s.Preemption.WithinClusterQueue = cmp.Or(str(p, "withinClusterQueue"), defaultPreemptionPolicy)
	b, _, _ := unstructured.NestedMap(p, "borrowWithinCohort")
	s.Preemption.BorrowWithinCohort = cmp.Or(str(b, "policy"), defaultBorrowWithinCohort)
	if v, ok, _ := unstructured.NestedInt64(b, "maxPriorityThreshold"); ok {
		t := int32(v)
		s.Preemption.MaxPriorityThreshold = &t
	}
	checks, _, _ := unstructured.NestedSlice(spec, "admissionChecksStrategy", "admissionChecks")
	for _, c := range checks {
		m, _ := c.(map[string]any)
		if on, _, _ := unstructured.NestedSlice(m, "onFlavors"); len(on) > 0 {
			unsaid = append(unsaid, fmt.Errorf("ClusterQueue %s runs admission check %s on some flavors only, which admission_checks cannot say", s.Name, str(m, "name")))
		}
		s.AdmissionChecks = append(s.AdmissionChecks, str(m, "name"))
	}
	return s, errors.Join(unsaid...)
}

// AdmitsFrom says whether the queue takes workloads from a namespace of those labels, as Kueue
// does (a workload from any other is held: NamespaceMismatch).
func (s ClusterQueueSpec) AdmitsFrom(namespaceLabels map[string]string) bool {
	if s.Namespaces == nil {
		return labels.SelectorFromSet(s.NamespaceSelector).Matches(labels.Set(namespaceLabels))
	}
	return s.Namespaces.Matches(labels.Set(namespaceLabels))
}

// NamespaceMismatch is Kueue v0.19.2's message for a workload whose namespace its ClusterQueue
// does not select (pkg/workload/resources.go); releases before v0.19 begin it with a capital W
// (pkg/scheduler/scheduler.go), so a read compares it without case.
const NamespaceMismatch = "workload namespace doesn't match ClusterQueue selector"

// QueueStatus is what a ClusterQueue or LocalQueue reports of its workloads.
type QueueStatus struct {
	Pending, Reserving, Admitted int64
	// Usage is the quota in use per flavor and resource, as "FLAVOR/RESOURCE" -> quantity;
	// Borrowed, the part of it a ClusterQueue borrows from its cohort (a LocalQueue has none).
	Usage, Borrowed map[string]string
	// Active says whether the queue admits workloads, and Reason why not.
	Active bool
	Reason string
}

// ReadQueueStatus reads a ClusterQueue's or LocalQueue's status.
func ReadQueueStatus(obj *unstructured.Unstructured) QueueStatus {
	st, _, _ := unstructured.NestedMap(obj.Object, "status")
	s := QueueStatus{Usage: map[string]string{}, Borrowed: map[string]string{}}
	s.Pending, s.Reserving, s.Admitted = count(st["pendingWorkloads"]), count(st["reservingWorkloads"]), count(st["admittedWorkloads"])
	usage, _, _ := unstructured.NestedSlice(st, "flavorsUsage")
	for _, f := range usage {
		fm, _ := f.(map[string]any)
		resources, _, _ := unstructured.NestedSlice(fm, "resources")
		for _, r := range resources {
			rm, _ := r.(map[string]any)
			key := str(fm, "name") + "/" + str(rm, "name")
			s.Usage[key] = cmp.Or(quantityString(rm["total"]), "0")
			if b := quantityString(rm["borrowed"]); b != "" && b != "0" {
				s.Borrowed[key] = b
			}
		}
	}
	if c := condition(obj, "Active"); c != nil {
		s.Active = c["status"] == "True"
		if !s.Active {
			s.Reason = fmt.Sprintf("%v: %v", c["reason"], c["message"])
		}
	}
	return s
}

// Covers says whether one of the queue's resource groups covers the resource.
func (s ClusterQueueSpec) Covers(resource string) bool {
	for _, g := range s.ResourceGroups {
		if slices.Contains(g.CoveredResources, resource) {
			return true
		}
	}
	return false
}

// StopPatch is the JSON merge patch that sets a ClusterQueue's or LocalQueue's stop policy:
// Hold (admit nothing new), HoldAndDrain (also evict what was admitted) or None (admit again).
func StopPatch(policy string) []byte {
	return []byte(`{"spec":{"stopPolicy":"` + policy + `"}}`)
}
