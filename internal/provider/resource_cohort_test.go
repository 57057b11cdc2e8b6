package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// cohortTree is a flavor, a root cohort (whose parent is orgParent, "" for none), a cohort below
// it with its own quota, lending limit and fair-sharing weight, and a ClusterQueue in that cohort
// with a weight of its own; queue_problems is asked about them in a check block.
func cohortTree(prefix, orgParent string) string {
	parent := ""
	if orgParent != "" {
		parent = fmt.Sprintf("  parent = %q\n", orgParent)
	}
	return providerConfig() + fmt.Sprintf(`
resource "training_resource_flavor" "gpu" {
  name = "%[1]s-gpu"
}

resource "training_cohort" "org" {
  name = "%[1]s-org"
%[2]s}

resource "training_cohort" "dept" {
  name                = "%[1]s-dept"
  parent              = training_cohort.org.name
  fair_sharing_weight = "2"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "2"
        lending_limit = "4"
      }
    }
  }
}

resource "training_cluster_queue" "team" {
  name                = "%[1]s-team"
  cohort              = training_cohort.dept.name
  fair_sharing_weight = "1500m"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name            = "nvidia.com/gpu"
        nominal_quota   = "1"
        borrowing_limit = "2"
      }
    }
  }
}

check "queues" {
  assert {
    condition     = length(provider::training::queue_problems([training_resource_flavor.gpu], [training_cluster_queue.team], [training_cohort.org, training_cohort.dept])) == 0
    error_message = join("; ", provider::training::queue_problems([training_resource_flavor.gpu], [training_cluster_queue.team], [training_cohort.org, training_cohort.dept]))
  }
}
`, prefix, parent)
}

// A tree of cohorts is made as Kueue takes it (a parent, a cohort's own quota lending more than
// it holds, fair-sharing weights on the cohort and its queue), and what is changed behind
// Terraform's back (a cohort's parent, its weight) shows in the next plan as an update of that
// cohort alone, applied on the same object. A configuration whose cohorts loop is warned of at
// plan by the cohort that closes the loop and by queue_problems, each naming the loop.
func TestAccKueue_cohortTreeShowsDriftAndALoopIsWarnedOf(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-coh")
	ctx := context.Background()
	cohorts := a.dyn.Resource(kueue.CohortGVR)
	var uid types.UID
	behindTerraform := func(patch string) func() {
		return func() {
			if _, err := cohorts.Patch(ctx, prefix+"-dept", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	asDeclared := func(*terraform.State) error {
		obj, err := a.get(kueue.CohortGVR, "", prefix+"-dept")
		if err != nil {
			return err
		}
		if uid == "" {
			uid = obj.GetUID()
		}
		got := kueue.ReadCohort(obj)
		want := kueue.CohortSpec{Name: prefix + "-dept", Parent: prefix + "-org", FairSharingWeight: "2", ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []string{"nvidia.com/gpu"}, Flavors: []kueue.FlavorQuotas{{Name: prefix + "-gpu",
				Resources: []kueue.Quota{{Name: "nvidia.com/gpu", Nominal: "2", LendingLimit: "4"}}}}}}}
		switch {
		case obj.GetUID() != uid:
			return fmt.Errorf("the cohort was replaced")
		case fmt.Sprint(got) != fmt.Sprint(want):
			return fmt.Errorf("the cohort is %+v; want %+v", got, want)
		}
		queue, err := a.get(kueue.ClusterQueueGVR, "", prefix+"-team")
		if err != nil {
			return err
		}
		if q, err := kueue.ReadClusterQueue(queue); err != nil || q.FairSharingWeight != "1500m" || q.Cohort != prefix+"-dept" {
			return fmt.Errorf("the ClusterQueue is %+v (%v); want cohort %s-dept and weight 1500m", q, err, prefix)
		}
		return nil
	}
	deptAlone := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("training_cohort.dept", plancheck.ResourceActionUpdate),
		plancheck.ExpectResourceAction("training_cohort.org", plancheck.ResourceActionNoop),
		plancheck.ExpectResourceAction("training_cluster_queue.team", plancheck.ResourceActionNoop)}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNoneNamed(a, prefix, kueueObject{kueue.CohortGVR, ""}, kueueObject{kueue.ClusterQueueGVR, ""}),
		Steps: []resource.TestStep{
			{Config: cohortTree(prefix, ""), Check: asDeclared},
			{PreConfig: behindTerraform(`{"spec": {"parentName": "` + prefix + `-elsewhere"}}`), Config: cohortTree(prefix, ""), ConfigPlanChecks: deptAlone, Check: asDeclared},
			{PreConfig: behindTerraform(`{"spec": {"fairSharing": {"weight": "3"}}}`), Config: cohortTree(prefix, ""), ConfigPlanChecks: deptAlone, Check: asDeclared},
		},
	})
	w := newWorkspace(t)
	w.write(cohortTree(prefix+"-loop", prefix+"-loop-dept"))
	out := w.run("plan", "-json", "-input=false")
	loop := fmt.Sprintf("%[1]s-loop-dept -> %[1]s-loop-org -> %[1]s-loop-dept", prefix)
	var found []string
	for _, d := range planDiagnostics(t, out)["training_cohort.dept"] {
		if strings.HasPrefix(d, "warning: Cohort "+prefix+"-loop-dept closes a loop of cohorts: "+loop) {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		t.Errorf("the plan's warnings on training_cohort.dept: %q; want one naming the loop %s", planDiagnostics(t, out)["training_cohort.dept"], loop)
	}
	if checks := strings.Join(checkWarnings(t, out), "\n"); !strings.Contains(checks, "Cohorts "+loop+" form a loop") ||
		!strings.Contains(checks, "("+prefix+"-loop-team)") {
		t.Errorf("the plan's check warnings:\n%s\nwant the loop %s, holding %s-loop-team", checks, loop, prefix)
	}
}
