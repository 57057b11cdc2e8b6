package kueue

// Release is the Kueue release whose rules a Snapshot follows where releases differ, as the
// cluster's schemas tell it (kube reads them; ReleaseMarker is what it looks for).
type Release int

const (
	// Current is Kueue v0.18 and later, as v0.19.2 decides: the default.
	Current Release = iota
	// V017 is Kueue v0.17 (tested: v0.17.0). Where its rules differ from v0.19.2's:
	//   - a pod set that asks for nothing its ClusterQueue covers, in a queue of topology flavors
	//     alone, is admitted without one (v0.18 holds it: no TAS flavor assigned);
	//   - a workload its ClusterQueue does not select is held with "Workload namespace ...";
	//   - a pod set's node selector and affinity are matched against a flavor by the label keys of
	//     every flavor of the resource group (flavorFor), not the flavor's own;
	//   - a flavor where preemption finds no candidates ranks as any other preemption (preferred).
	// Kueue v0.18, untested, is taken for Current.
	V017
)

// ReleaseMarker is the ClusterQueue field whose presence in the cluster's schema
// (kueue.x-k8s.io/v1beta2) tells Current from V017: concurrent admission came with v0.18.
var ReleaseMarker = []string{"spec", "concurrentAdmissionPolicy"}

func (r Release) String() string {
	if r == V017 {
		return "v0.17"
	}
	return "v0.18 or later"
}

// SetRelease makes the snapshot decide as r does.
func (s *Snapshot) SetRelease(r Release) { s.release = r }

// NamespaceMismatchOf is r's message for a workload whose namespace its ClusterQueue does not
// select.
func NamespaceMismatchOf(r Release) string {
	if r == V017 {
		return "Workload namespace doesn't match ClusterQueue selector"
	}
	return NamespaceMismatch
}
