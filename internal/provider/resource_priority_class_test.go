package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A WorkloadPriorityClass is made as Kueue takes it, and a queued job that names it in its
// labels gets its value as its Workload's priority. A change of value or description behind
// Terraform's back shows in the next plan as an in-place update of that attribute alone, which
// the apply sets back on the same object; a class deleted behind Terraform's back is planned to
// be made again. A value outside Kueue's 32-bit range is refused at plan.
func TestAccKueue_workloadPriorityClassGivesItsValueAndShowsDrift(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-wpc")
	config := func(value string) string {
		return quotaConfig(prefix, 2, fmt.Sprintf(`
resource "training_workload_priority_class" "urgent" {
  name        = "%[1]s-urgent"
  value       = %[2]s
  description = "a release waits for it"
}
`, prefix, value)+queuedJob(jobs.MPI, "job", prefix+"-job", `  labels = { "kueue.x-k8s.io/priority-class" = training_workload_priority_class.urgent.name }`))
	}
	ctx := context.Background()
	classes := a.dyn.Resource(kueue.WorkloadPriorityClassGVR)
	var uid types.UID
	behindTerraform := func(patch string) func() {
		return func() {
			if _, err := classes.Patch(ctx, prefix+"-urgent", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	sameObject := func(*terraform.State) error {
		obj, err := a.get(kueue.WorkloadPriorityClassGVR, "", prefix+"-urgent")
		if err != nil {
			return err
		}
		s, err := kueue.ReadWorkloadPriorityClass(obj)
		switch {
		case err != nil:
			return err
		case obj.GetUID() != uid:
			return fmt.Errorf("the class was replaced (uid %s, was %s)", obj.GetUID(), uid)
		case s.Value != 7000 || s.Description != "a release waits for it":
			return fmt.Errorf("the class is %+v after the apply; want value 7000 and the configuration's description", s)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoneNamed(a, prefix, kueueObject{kueue.WorkloadPriorityClassGVR, ""}),
		Steps: []resource.TestStep{
			{Config: config("2147483648"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)value.*between\s+-2147483648\s+and\s+2147483647`)},
			{Config: config("7000"), Check: func(*terraform.State) error {
				obj, err := a.get(kueue.WorkloadPriorityClassGVR, "", prefix+"-urgent")
				if err != nil {
					return err
				}
				uid = obj.GetUID()
				wl := a.workloadOf(jobs.MPI, prefix+"-job")
				if wl == nil {
					return fmt.Errorf("the job has no Workload")
				}
				priority, _, _ := unstructured.NestedInt64(wl.Object, "spec", "priority")
				class, _, _ := unstructured.NestedString(wl.Object, "spec", "priorityClassRef", "name")
				if priority != 7000 {
					return fmt.Errorf("the job's Workload has priority %d (class %q); want the class's 7000", priority, class)
				}
				return nil
			}},
			{PreConfig: behindTerraform(`{"value": 5}`), Config: config("7000"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("training_workload_priority_class.urgent", plancheck.ResourceActionUpdate),
				plancheck.ExpectResourceAction("training_mpi_job.job", plancheck.ResourceActionNoop)}}, Check: sameObject},
			{PreConfig: behindTerraform(`{"description": "whenever"}`), Config: config("7000"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("training_workload_priority_class.urgent", plancheck.ResourceActionUpdate)}}, Check: sameObject},
			{PreConfig: func() {
				if err := classes.Delete(ctx, prefix+"-urgent", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}, Config: config("7000"), PlanOnly: true, ExpectNonEmptyPlan: true},
		},
	})
}
