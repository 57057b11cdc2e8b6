package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

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
// workload_priority_class gets its value as its Workload's priority; naming another class changes
// the same job in place, and Kueue gives its Workload the other's value; the label in the job's
// labels is refused at plan, naming the attribute. A change of value or description behind
// Terraform's back shows in the next plan as an in-place update of that attribute alone, which
// the apply sets back on the same object; a class deleted behind Terraform's back is planned to
// be made again. A value outside Kueue's 32-bit range is refused at plan.
func TestAccKueue_workloadPriorityClassGivesItsValueAndShowsDrift(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-wpc")
	classes2 := func(value, jobClass string) string {
		return quotaConfig(prefix, 2, fmt.Sprintf(`
resource "training_workload_priority_class" "urgent" {
  name        = "%[1]s-urgent"
  value       = %[2]s
  description = "a release waits for it"
}

resource "training_workload_priority_class" "routine" {
  name  = "%[1]s-routine"
  value = 100
}
`, prefix, value)+queuedJob(jobs.MPI, "job", prefix+"-job", "  workload_priority_class = training_workload_priority_class."+jobClass+".name"))
	}
	config := func(value string) string { return classes2(value, "urgent") }
	ctx := context.Background()
	classes := a.dyn.Resource(kueue.WorkloadPriorityClassGVR)
	var uid, jobUID types.UID
	workloadPriority := func(want int64) resource.TestCheckFunc {
		return func(*terraform.State) error {
			job, err := a.get(jobs.MPI.GVR, "default", prefix+"-job")
			if err != nil {
				return err
			}
			if jobUID == "" {
				jobUID = job.GetUID()
			} else if job.GetUID() != jobUID {
				return fmt.Errorf("the job was replaced")
			}
			wl := a.workloadOf(jobs.MPI, prefix+"-job")
			if wl == nil {
				return fmt.Errorf("the job has no Workload")
			}
			priority, _, _ := unstructured.NestedInt64(wl.Object, "spec", "priority")
			class, _, _ := unstructured.NestedString(wl.Object, "spec", "priorityClassRef", "name")
			if priority != want {
				return fmt.Errorf("the job's Workload has priority %d (class %q); want %d", priority, class, want)
			}
			return nil
		}
	}
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
			{Config: strings.Replace(config("7000"), "  workload_priority_class =", `  labels = { "kueue.x-k8s.io/priority-class" = "x" }
  workload_priority_class =`, 1), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)set\s+workload_priority_class\s+instead`)},
			{Config: config("7000"), Check: resource.ComposeTestCheckFunc(func(*terraform.State) error {
				obj, err := a.get(kueue.WorkloadPriorityClassGVR, "", prefix+"-urgent")
				if err != nil {
					return err
				}
				uid = obj.GetUID()
				return nil
			}, workloadPriority(7000))},
			// Another class: the same job, its Workload given the new priority by Kueue.
			{Config: classes2("7000", "routine"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("training_mpi_job.job", plancheck.ResourceActionUpdate)}},
				Check: eventually(workloadPriority(100))},
			{Config: config("7000"), Check: eventually(workloadPriority(7000))},
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

// eventually is check once it passes, asked every second for up to a minute (a controller acts
// on what the apply did a moment later).
func eventually(check resource.TestCheckFunc) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var err error
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
			if err = check(s); err == nil || time.Now().After(deadline) {
				return err
			}
		}
	}
}
