package provider

import (
	"os"
	"strings"
	"testing"
)

// The function's example, planned through the CLI (nothing is created): its check block warns
// of the flavor no ClusterQueue covers and of the borrowing limit beyond what the rest of the
// cohort lends, each naming both ends, whichever order Terraform plans the queues in; with the
// flavor covered and the limit within what the cohort lends, the plan has no such warning.
func TestAccQueueProblems_theExampleWarnsOfAFlavorNoQueueCoversAndALimitItsCohortCannotMeet(t *testing.T) {
	newAPI(t)
	t.Parallel()
	example, err := os.ReadFile("../../examples/functions/queue_problems/function.tf")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t)
	w.write(providerConfig() + string(example))
	out := w.run("plan", "-json", "-input=false")
	all := strings.Join(checkWarnings(t, out), "\n")
	for _, want := range []string{
		"ResourceFlavor h100 is covered by none of the 2 ClusterQueues given",
		"ClusterQueue team-vision may borrow 12 of nvidia.com/gpu on flavor a100, but the rest of cohort org ([team-nlp]) could lend it only 10",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the plan's check warnings:\n%s\nwant %q", all, want)
		}
	}
	fixed := strings.Replace(strings.Replace(string(example), `borrowing_limit = "12"`, `borrowing_limit = "10"`, 1), "flavors        = [training_resource_flavor.a100, training_resource_flavor.h100]", "flavors        = [training_resource_flavor.a100]", 1)
	if fixed == string(example) {
		t.Fatal("the example changed: the test no longer fixes it")
	}
	w.write(providerConfig() + fixed)
	if warnings := checkWarnings(t, w.run("plan", "-json", "-input=false")); len(warnings) > 0 {
		t.Errorf("with the queues fixed, the check still warns: %q", warnings)
	}
}

// checkWarnings are the plan's warnings of failed check block assertions.
func checkWarnings(t *testing.T, planJSON string) []string {
	var out []string
	for _, diags := range planDiagnostics(t, planJSON) {
		for _, d := range diags {
			if strings.HasPrefix(d, "warning: Check block assertion failed") {
				out = append(out, d)
			}
		}
	}
	return out
}
