package provider

import (
	"os"
	"strings"
	"testing"
)

// The function's example, planned through the CLI (nothing is created): its check block warns
// of the flavor no ClusterQueue covers and of the borrowing limit beyond what the rest of the
// cohort lends, each naming both ends, whichever order Terraform plans the queues in; with the
// flavor covered and the limit within what the cohort lends, the plan has no such warning; with
// the admission check naming a config not given, and a queue a check not given, it warns of both.
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
	// A provisioning check whose config is not among those given, and a check a queue names that
	// is not given.
	broken := strings.Replace(strings.Replace(fixed, "provisioning_request_config = training_provisioning_request_config.capacity.name",
		`provisioning_request_config = "elsewhere"`, 1), "admission_checks = [training_admission_check.capacity.name]",
		`admission_checks = [training_admission_check.capacity.name, "fleet"]`, 1)
	w.write(providerConfig() + broken)
	all = strings.Join(checkWarnings(t, w.run("plan", "-json", "-input=false")), "\n")
	for _, want := range []string{
		"ClusterQueue team-nlp names AdmissionCheck fleet, which is not among the 1 given",
		"AdmissionCheck capacity names ProvisioningRequestConfig elsewhere, which is not among the 1 given: unless it exists on the cluster, " +
			"Kueue keeps the check inactive, and it holds every job of ClusterQueue(s) team-nlp",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the plan's check warnings:\n%s\nwant %q", all, want)
		}
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
