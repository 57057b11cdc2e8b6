package kueue

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Admission is what a job's Workload says about it.
type Admission struct {
	// Admitted: the workload holds quota and its admission checks passed; the job may run.
	Admitted bool
	// Reason says why it is not admitted: the scheduler's message (for example insufficient
	// quota, with how much more is needed), its eviction or preemption, or its deactivation.
	Reason string
}

// ReadWorkload reads a job's Workload.
func ReadWorkload(wl *unstructured.Unstructured) Admission {
	if c := condition(wl, "Admitted"); c != nil && c["status"] == "True" {
		return Admission{Admitted: true}
	}
	var reasons []string
	if active, ok, _ := unstructured.NestedBool(wl.Object, "spec", "active"); ok && !active {
		reasons = append(reasons, "deactivated (spec.active is false)")
	}
	if c := condition(wl, "Evicted"); c != nil && c["status"] == "True" {
		reasons = append(reasons, fmt.Sprintf("evicted (%v): %v", c["reason"], c["message"]))
	} else if c := condition(wl, "Preempted"); c != nil && c["status"] == "True" {
		reasons = append(reasons, fmt.Sprintf("preempted (%v): %v", c["reason"], c["message"]))
	}
	if c := condition(wl, "QuotaReserved"); c != nil && c["status"] == "False" && c["message"] != "" {
		reasons = append(reasons, fmt.Sprint(c["message"]))
	} else if c != nil && c["status"] == "True" {
		reasons = append(reasons, "quota reserved, waiting for its admission checks")
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "waiting for Kueue to consider it")
	}
	return Admission{Reason: strings.Join(reasons, "; ")}
}
