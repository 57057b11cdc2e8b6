package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// A job recorded before it started (wait_for = "created", or "admitted" by Kueue) that then ran
// to its end and was deleted (by its TTL, say) is not run again by the next apply: the state's
// last status, PENDING, is stale, and the job having existed decides. The plan is empty.
func TestAccJob_goneAfterItWasRecordedPendingIsNotRunAgain(t *testing.T) {
	for _, wait := range []string{waitCreated, waitAdmitted} {
		t.Run(wait, func(t *testing.T) {
			a := newAPI(t)
			t.Parallel()
			nodeTaintsMu.RLock()
			defer nodeTaintsMu.RUnlock()
			prefix := acctest.RandomWithPrefix("tf-acc-gone" + wait)
			name := prefix + "-job"
			config := providerConfig() + mpiJobBlock("test", name, "  tolerations = [\"ssd_node\"]\n  wait_for = \"created\"\n")
			if wait == waitAdmitted {
				config = quotaConfig(prefix, 8, queuedJob(jobs.MPI, "test", name, "  wait_for = \"admitted\"\n"))
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				CheckDestroy:             checkGone(a, jobs.MPI, name),
				Steps: []resource.TestStep{
					{
						Config: config,
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("start_time"), knownvalue.Null()),
						},
					},
					{
						// It runs to its end and is deleted outside Terraform.
						PreConfig: func() {
							a.finishMPIJob(name)
							deleteMPIJobOutside(t, a, name)
						},
						Config:           config,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
					},
				},
			})
		})
	}
}

// A job that never left Kueue's queue (QUEUED, no start time) and is then cleared from it is
// created again by the next apply, as any resource deleted outside Terraform is.
func TestAccJob_goneWhileQueuedIsCreatedAgain(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	prefix := acctest.RandomWithPrefix("tf-acc-goneq")
	name := prefix + "-job"
	// Its ClusterQueue admits nothing new (stop_policy Hold): the job stays queued, and its
	// admitted wait runs out at once. (A queue of no GPU quota would never admit it: that fails
	// the plan.)
	config := strings.Replace(quotaConfig(prefix, 8, queuedJob(jobs.MPI, "test", name, "  wait_for = \"admitted\"\n  timeouts {\n    create = \"5s\"\n  }\n")),
		"  name = \""+prefix+"-team\"\n", "  name = \""+prefix+"-team\"\n  stop_policy = \"Hold\"\n", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.MPI, name),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Queued)),
				},
			},
			{
				PreConfig: func() {
					deleteMPIJobOutside(t, a, name)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
}

// keptWhenGone decides by the job having existed (its UID in state), not by the last status the
// state saw, which a job recorded at creation or admission holds from before it ran; it drops
// only a job that cannot have run: one last seen held back (queued, suspended) that had never
// started. Without a UID (a state from before it was recorded) the last status is all there is.
func TestKeptWhenGoneDecidesByTheJobHavingExisted(t *testing.T) {
	target := kube.Target{Kind: "MPIJob", Namespace: "default", Name: "j"}
	for _, tc := range []struct {
		name               string
		uid, status, start string
		recreate, kept     bool
	}{
		{name: "recorded pending at creation", uid: "u", status: jobs.Pending, kept: true},
		{name: "recorded running", uid: "u", status: jobs.Running, start: "2026-11-24T10:00:00Z", kept: true},
		{name: "finished", uid: "u", status: jobs.Succeeded, start: "2026-11-24T10:00:00Z", kept: true},
		{name: "recorded pending, recreate_if_missing", uid: "u", status: jobs.Pending, recreate: true},
		{name: "last seen queued, never started", uid: "u", status: jobs.Queued},
		{name: "held by a suspend, never started", uid: "u", status: jobs.Suspended},
		{name: "queued once, started since", uid: "u", status: jobs.Queued, start: "2026-11-24T10:00:00Z", kept: true},
		{name: "a state without a uid, pending", status: jobs.Pending},
		{name: "a state without a uid, running", status: jobs.Running, kept: true},
	} {
		f := &jobFields{UID: types.StringValue(tc.uid), RecreateIfMissing: types.BoolValue(tc.recreate)}
		f.Status, f.StartTime = types.StringValue(tc.status), types.StringValue(tc.start)
		if tc.uid == "" {
			f.UID = types.StringNull()
		}
		if tc.start == "" {
			f.StartTime = types.StringNull()
		}
		var diags diag.Diagnostics
		if kept := keptWhenGone(target, f, &diags); kept != tc.kept {
			t.Errorf("%s: kept %v, want %v", tc.name, kept, tc.kept)
		}
		warned := len(diags) == 1 && strings.Contains(diags[0].Summary(), "is gone from the cluster")
		if ranMaybe := tc.kept || tc.recreate; warned != ranMaybe {
			t.Errorf("%s: warnings %v", tc.name, diags)
		}
		if tc.kept && !strings.Contains(fmt.Sprint(diags), "-replace") {
			t.Errorf("%s: the warning does not say how to run it again: %v", tc.name, diags)
		}
	}
}

// A plan shows only what changes: an in-place rescale of a running job keeps its start time
// (the job is not restarted) and leaves its status and pods to the apply; a change of labels
// leaves the whole status as the state has it.
func TestAccJob_planShowsOnlyWhatAnUpdateChanges(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	const address = "training_mpi_job.test"
	unknown := func(names ...string) []plancheck.PlanCheck {
		var checks []plancheck.PlanCheck
		for _, n := range names {
			checks = append(checks, plancheck.ExpectUnknownValue(address, tfjsonpath.New(n)))
		}
		return checks
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: elasticMPIConfig(name, 2), Check: resource.TestCheckResourceAttrSet(address, "start_time")},
			{
				Config: elasticMPIConfig(name, 3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(unknown("status", "instances", "duration"),
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("start_time"), knownvalue.NotNull()),
				)},
			},
			{
				Config: elasticMPIConfig(name, 3, `  labels = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("start_time"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("duration"), knownvalue.NotNull()),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("instances"), knownvalue.ListSizeExact(4)),
				}},
			},
		},
	})
}

// A toleration written as a block that a string can say imports as the string: the plan after
// the import changes only the form, in place (the user's form is kept), and the running job is
// not replaced; the plan after that is empty.
func TestAccJob_tolerationBlockAfterImportIsNotAReplacement(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	const address = "training_mpi_job.test"
	// Made outside this configuration, as the block says it.
	obj, _, err := jobs.MPIJobSpec{Name: name, Namespace: "default", Workers: 1, LauncherCommand: []string{"mpirun", "python", "/train.py"},
		Pod: jobs.PodOptions{Image: "registry.example/horovod:0.13.11", GPUResource: jobs.DefaultGPUResource,
			Tolerations: []corev1.Toleration{{Key: "ssd_node", Operator: corev1.TolerationOpExists}}}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	made, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	config := providerConfig() + mpiJobBlock("test", name, `  wait_for = "created"
  toleration {
    key      = "ssd_node"
    operator = "Exists"
  }
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: config, ResourceName: address, ImportState: true, ImportStateId: "default/" + name, ImportStatePersist: true},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					obj, err := a.get(jobs.MPI.GVR, "default", name)
					if err != nil || obj.GetUID() != made.GetUID() {
						return fmt.Errorf("the job was replaced (err %v)", err)
					}
					return nil
				},
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
