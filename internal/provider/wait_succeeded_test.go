package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A wait for the end that runs out keeps the training: the job stays in state, running and not
// tainted, and the postcondition the docs give a pipeline fails that apply (so the pipeline does
// not go on as if it had succeeded) without Terraform replacing the job at the next apply. Once
// the job has succeeded, the same configuration plans nothing.
func TestAccJob_aWaitForTheEndThatRunsOutKeepsTheTraining(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	job := func(postcondition bool) string {
		extra := "  tolerations = [\"ssd_node\"]\n  wait_for    = \"succeeded\"\n  timeouts {\n    create = \"15s\"\n  }\n"
		if postcondition {
			extra += "  lifecycle {\n    postcondition {\n      condition     = self.status == \"SUCCEEDED\"\n" +
				"      error_message = \"The training has not succeeded.\"\n    }\n  }\n"
		}
		return providerConfig() + mpiJobBlock("test", name, extra)
	}
	var uid string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: []resource.TestStep{
			{Config: job(true), ExpectError: regexp.MustCompile(`(?s)Resource postcondition failed.*The training has not succeeded`)},
			{
				// Not tainted: the job is the one made, and nothing is planned for it.
				Config:           job(false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(s *terraform.State) error {
					uid = s.RootModule().Resources["training_mpi_job.test"].Primary.Attributes["uid"]
					return nil
				},
			},
			{
				PreConfig:        func() { a.finishMPIJob(name) },
				Config:           job(true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Succeeded)),
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("uid"), knownvalue.StringFunc(func(v string) error {
						if v != uid {
							return fmt.Errorf("the job was made again: uid %s, first %s", v, uid)
						}
						return nil
					})),
				},
			},
		},
	})
}
