package kueue

import (
	"strings"
	"testing"
)

// A flavor no queue covers and a borrowing limit beyond what the cohort's other queues lend
// (their nominal quota, or their lending limit) are problems naming both ends; a limit the
// cohort can meet, and a flavor some queue covers, are not.
func TestQueueProblemsOfTheQueuesTakenTogether(t *testing.T) {
	team := func(name, nominal, borrowing, lending string) ClusterQueueSpec {
		return ClusterQueueSpec{Name: name, Cohort: "org", ResourceGroups: []ResourceGroup{{CoveredResources: []string{"nvidia.com/gpu"},
			Flavors: []FlavorQuotas{{Name: "a100", Resources: []Quota{{Name: "nvidia.com/gpu", Nominal: nominal, BorrowingLimit: borrowing, LendingLimit: lending}}}}}}}
	}
	got := QueueProblems([]string{"a100", "h100"}, []ClusterQueueSpec{team("vision", "8", "12", ""), team("nlp", "16", "", "10")})
	want := []string{
		"ResourceFlavor h100 is covered by none of the 2 ClusterQueues given",
		"ClusterQueue vision may borrow 12 of nvidia.com/gpu on flavor a100, but the rest of cohort org ([nlp]) could lend it only 10",
	}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %q, want %q", i, got[i], want[i])
		}
	}
	if got := QueueProblems([]string{"a100"}, []ClusterQueueSpec{team("vision", "8", "10", ""), team("nlp", "16", "", "10")}); len(got) != 0 {
		t.Errorf("a limit the cohort meets: %q", got)
	}
}

// A check a queue names that is not given, and a provisioning check whose config is not given,
// are problems naming both ends, only where checks (or configs) are given at all: a configuration
// that gives none may keep them elsewhere.
func TestAdmissionCheckProblemsNameWhatIsMissing(t *testing.T) {
	queues := []ClusterQueueSpec{{Name: "team", AdmissionChecks: []string{"dws", "gone"}}}
	checks := []AdmissionCheckSpec{{Name: "dws", ProvisioningConfig: "capacity"}, {Name: "fleet", Config: "workers"}}
	got := AdmissionCheckProblems(queues, checks, []string{"other"})
	want := []string{
		"ClusterQueue team names AdmissionCheck gone, which is not among the 2 given",
		"AdmissionCheck dws names ProvisioningRequestConfig capacity, which is not among the 1 given: unless it exists on the cluster, " +
			"Kueue keeps the check inactive, and it holds every job of ClusterQueue(s) team",
	}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %q, want %q", i, got[i], want[i])
		}
	}
	if got := AdmissionCheckProblems(queues, checks, nil); len(got) != 1 {
		t.Errorf("without configs given, only the missing check: %q", got)
	}
	if got := AdmissionCheckProblems(queues, nil, nil); len(got) != 0 {
		t.Errorf("without checks given: %q", got)
	}
	if got := AdmissionCheckProblems(queues[:0], checks, []string{"capacity"}); len(got) != 0 {
		t.Errorf("every config given: %q", got)
	}
}
