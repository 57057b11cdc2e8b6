package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// exampleImport reads the docs' import example of a resource type: `terraform import ADDRESS ID`.
func exampleImport(t *testing.T, typeName string) (address, id string) {
	t.Helper()
	raw, err := os.ReadFile("../../examples/resources/" + typeName + "/import.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^terraform import (\S+) (\S+)$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatalf("%s/import.sh has no terraform import line", typeName)
	}
	return m[1], m[2]
}

// exampleConfig is the docs' example of a job resource type, each job waiting only until it
// is created: the examples ask for GPUs, memory and claims that the local cluster's nodes do
// not all have, and what their pods become is other tests' business. Its outputs, which show
// the status, are left out: it moves on while the jobs start, and a plan would save it.
func exampleConfig(t *testing.T, typeName string) string {
	t.Helper()
	raw, err := os.ReadFile("../../examples/resources/" + typeName + "/resource.tf")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile(`(?ms)^resource "training_\w+_job" "\w+" \{\n.*?^\}\n`)
	config := blocks.ReplaceAllStringFunc(string(raw), func(block string) string {
		if strings.Contains(block, "wait_for") {
			return block
		}
		header, body, _ := strings.Cut(block, "\n")
		return header + "\n  wait_for = \"created\"\n" + body
	})
	config = regexp.MustCompile(`(?ms)^output "\w+" \{\n.*?^\}\n`).ReplaceAllString(config, "")
	return providerConfig() + config
}

// Every job example of the docs applies, plans empty after its apply, and its import example
// gives the state the apply did.
func TestAccExamples_applyPlanEmptyAndImport(t *testing.T) {
	a := newAPI(t)
	for _, kind := range jobs.Kinds() {
		typeName := "training_" + kind.Name + "_job"
		t.Run(kind.Name, func(t *testing.T) {
			config := exampleConfig(t, typeName)
			address, id := exampleImport(t, typeName)
			_, name, _ := strings.Cut(id, "/")
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				CheckDestroy:             checkGone(a, kind, name),
				Steps: []resource.TestStep{
					{Config: config},
					{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
					{
						ResourceName: address, ImportState: true, ImportStateId: id, ImportStateVerify: true,
						// wait_for is Terraform's alone (import gives the default); the status moves on.
						ImportStateVerifyIgnore: []string{"duration", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
					},
				},
			})
		})
	}
}

// Every other example of the docs (the PSA-restricted job, the RDMA job, the sidecar) plans
// against the local cluster without an error: its attributes, its patches and its plan-time
// checks are what the docs say.
func TestAccExamples_everyOtherExamplePlans(t *testing.T) {
	newAPI(t)
	files, err := filepath.Glob("../../examples/resources/*/*.tf")
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for _, file := range files {
		if base := filepath.Base(file); base == "resource.tf" || base == "versions.tf" {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		planned++
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps:                    []resource.TestStep{{Config: providerConfig() + string(raw), PlanOnly: true, ExpectNonEmptyPlan: true}},
			})
		})
	}
	if planned < 3 {
		t.Errorf("%d other examples planned, want the restricted, RDMA and sidecar ones at least", planned)
	}
}
