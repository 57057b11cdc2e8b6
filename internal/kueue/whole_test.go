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
