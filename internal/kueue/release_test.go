package kueue

import "testing"

// Kueue v0.17 matches a pod set against a flavor by the label keys of every flavor of the group:
// a node selector on another flavor's key refuses this one, where v0.18.2 and later take the
// flavor's own keys and so pick the first flavor.
func TestV017MatchesAFlavorByTheLabelKeysOfItsWholeGroup(t *testing.T) {
	flavors := []FlavorSpec{{Name: "a", NodeLabels: map[string]string{"zone": "a"}}, {Name: "b", NodeLabels: map[string]string{"gpu": "true"}}}
	q := ClusterQueueSpec{Name: "q", ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu"}, Flavors: []FlavorQuotas{
		{Name: "a", Resources: []Quota{{Name: "cpu", Nominal: "8"}}}, {Name: "b", Resources: []Quota{{Name: "cpu", Nominal: "8"}}}}}}}
	for release, want := range map[Release]string{Current: "a", V017: "b"} {
		s := snapshot(t, flavors, []ClusterQueueSpec{q})
		s.SetRelease(release)
		wl := job("ns/x", "q", 0, 0, 1, 1)
		wl.PodSets[0].NodeSelector = map[string]string{"gpu": "true"}
		got := s.Predict([]*Workload{wl})[0]
		if !got.Admitted || got.Flavors["worker"]["cpu"] != want {
			t.Errorf("Kueue %s: %+v, want admitted on flavor %s", release, got, want)
		}
	}
}

// Kueue from v0.19.1 ranks a flavor where preemption would find no candidates below any that can
// be used; v0.17 ranks it by its borrowing as any other preemption, so with
// PreemptionOverBorrowing it prefers it to a flavor that fits by borrowing.
func TestV017RanksAFlavorWithoutCandidatesByItsBorrowing(t *testing.T) {
	f := Fungibility{Preference: PreemptionOverBorrowing}
	fitsBorrowing, noCandidates := granular{modeFit, 1}, granular{modeNoCandidates, 0}
	if !preferred(fitsBorrowing, noCandidates, f, Current) {
		t.Error("Kueue v0.19 prefers the flavor without candidates")
	}
	if preferred(fitsBorrowing, noCandidates, f, V017) {
		t.Error("Kueue v0.17 prefers the flavor that fits by borrowing")
	}
}
