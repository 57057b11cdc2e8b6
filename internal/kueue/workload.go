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
	// Cluster is the MultiKueue worker cluster the workload was dispatched to (its
	// MultiKueueCluster's name, status.clusterName); empty for a workload that runs where it is.
	Cluster string
}

// ReadWorkload reads a job's Workload.
func ReadWorkload(wl *unstructured.Unstructured) Admission {
	cluster, _, _ := unstructured.NestedString(wl.Object, "status", "clusterName")
	if c := condition(wl, "Admitted"); c != nil && c["status"] == "True" {
		return Admission{Admitted: true, Cluster: cluster}
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
		reasons = append(reasons, "quota reserved, waiting for its admission checks"+pendingChecks(wl))
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "waiting for Kueue to consider it")
	}
	return Admission{Reason: strings.Join(reasons, "; "), Cluster: cluster}
}

// pendingChecks names the workload's admission checks that are not Ready, with what each says
// (MultiKueue's: which worker clusters it was nominated to, or why none can take it).
func pendingChecks(wl *unstructured.Unstructured) string {
	checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	var pending []string
	for _, c := range checks {
		m, _ := c.(map[string]any)
		if m == nil || m["state"] == "Ready" {
			continue
		}
		say := fmt.Sprintf("%v is %v", m["name"], m["state"])
		if msg, _ := m["message"].(string); msg != "" {
			say += ": " + msg
		}
		pending = append(pending, say)
	}
	if len(pending) == 0 {
		return ""
	}
	return " (" + strings.Join(pending, "; ") + ")"
}

// HoldsQuota says whether the Workload holds quota now (its QuotaReserved condition is true):
// an evicted or deactivated one has given it back.
func HoldsQuota(wl *unstructured.Unstructured) bool {
	c := condition(wl, "QuotaReserved")
	return c != nil && c["status"] == "True"
}

// ActivePatch is the JSON merge patch that deactivates a Workload (Kueue evicts it: its job is
// suspended, its pods stopped, its quota given back) or activates it again (Kueue queues it).
func ActivePatch(active bool) []byte {
	if active {
		return []byte(`{"spec":{"active":true}}`)
	}
	return []byte(`{"spec":{"active":false}}`)
}
