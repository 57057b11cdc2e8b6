package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// A job is never run twice by the next apply, whatever status its state was last saved with:
// one recorded PENDING at creation, one QUEUED by a ClusterQueue that held it when its create's
// wait ran out, one SUSPENDED, one RUNNING and one that finished, each then deleted behind
// Terraform's back. State cannot tell a job cleared from its queue before it ran from one that
// ran for days and was removed by its TTL: the next plan keeps every one (it is empty) and warns
// of each, saying how to run it again.
func TestAccJob_goneIsKeptWhateverStatusItWasSavedWith(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	prefix := acctest.RandomWithPrefix("tf-acc-gone")
	names := map[string]string{}
	var jobsHCL strings.Builder
	for _, saved := range []struct{ label, extra string }{
		// No node has the label: the job stays pending.
		{"pending", "  tolerations = [\"ssd_node\"]\n  node_selector = { \"kubetrain.test/no-such-pool\" = \"none\" }\n  wait_for = \"created\"\n"},
		{"suspended", "  tolerations = [\"ssd_node\"]\n  suspend = true\n"},
		{"running", "  tolerations = [\"ssd_node\"]\n"},
		{"finished", "  tolerations = [\"ssd_node\"]\n"},
	} {
		names[saved.label] = prefix + "-" + saved.label
		jobsHCL.WriteString(mpiJobBlock(saved.label, names[saved.label], saved.extra))
	}
	// Its ClusterQueue admits nothing new (stop_policy Hold): the job stays queued, and its
	// admitted wait runs out at once, with a warning.
	names["queued"] = prefix + "-queued"
	jobsHCL.WriteString(queuedJob(jobs.MPI, "queued", names["queued"], "  wait_for = \"admitted\"\n  timeouts {\n    create = \"5s\"\n  }\n"))
	config := strings.Replace(quotaConfig(prefix, 8, jobsHCL.String()),
		"  name = \""+prefix+"-team\"\n", "  name = \""+prefix+"-team\"\n  stop_policy = \"Hold\"\n", 1)

	w := newWorkspace(t)
	w.write(config)
	defer func() {
		if out, err := w.try(nil, "destroy", "-auto-approve", "-input=false"); err != nil {
			t.Errorf("destroy: %v\n%s", err, out)
		}
	}()
	w.run("apply", "-auto-approve", "-input=false")
	a.finishMPIJob(names["finished"])
	w.run("apply", "-refresh-only", "-auto-approve", "-input=false")
	state := showState(t, w)
	for label, want := range map[string]string{"pending": jobs.Pending, "queued": jobs.Queued, "suspended": jobs.Suspended,
		"running": jobs.Running, "finished": jobs.Succeeded} {
		if got := state["training_mpi_job."+label]["status"]; got != want {
			t.Fatalf("training_mpi_job.%s was saved %v, want %s", label, got, want)
		}
	}
	for _, name := range names {
		deleteMPIJobOutside(t, a, name)
	}
	out, err := w.try(nil, "plan", "-json", "-detailed-exitcode", "-input=false")
	if err != nil {
		t.Fatalf("the plan after the jobs were deleted outside Terraform is not empty (%v): it would run a training again:\n%s", err, out)
	}
	diags := planDiagnostics(t, out)
	for label, name := range names {
		warned := regexp.MustCompile(`^warning: MPIJob is gone from the cluster: .*` + regexp.QuoteMeta(name) + `.*terraform apply -replace=`)
		if !slices.ContainsFunc(diags["training_mpi_job."+label], warned.MatchString) {
			t.Errorf("the plan does not warn that training_mpi_job.%s is gone and how to run it again: %q", label, diags)
		}
	}
}

// keptWhenGone keeps every job that existed (its UID in state, or any status the state saw),
// whatever status it was last saved with: state cannot tell a job cleared from its queue before
// it ran from one that Kueue admitted, that ran for days and that its TTL then removed. Only
// recreate_if_missing drops it (with a warning), and only a read with neither (an import of a
// job that does not exist) drops it silently.
func TestKeptWhenGoneDecidesByTheJobHavingExisted(t *testing.T) {
	target := kube.Target{Kind: "MPIJob", Namespace: "default", Name: "j"}
	for _, tc := range []struct {
		name               string
		uid, status, start string
		recreate, kept     bool
	}{
		{name: "recorded pending at creation", uid: "u", status: jobs.Pending, kept: true},
		{name: "recorded running", uid: "u", status: jobs.Running, start: "2026-11-24T10:00:00Z", kept: true},
		{name: "succeeded", uid: "u", status: jobs.Succeeded, start: "2026-11-24T10:00:00Z", kept: true},
		{name: "failed", uid: "u", status: jobs.Failed, start: "2026-11-24T10:00:00Z", kept: true},
		{name: "recorded pending, recreate_if_missing", uid: "u", status: jobs.Pending, recreate: true},
		{name: "last seen queued, admitted and run since, unseen", uid: "u", status: jobs.Queued, kept: true},
		{name: "last seen suspended, resumed and run since, unseen", uid: "u", status: jobs.Suspended, kept: true},
		{name: "queued once, started since", uid: "u", status: jobs.Queued, start: "2026-11-24T10:00:00Z", kept: true},
		{name: "last seen queued, recreate_if_missing", uid: "u", status: jobs.Queued, recreate: true},
		{name: "a state without a uid, pending", status: jobs.Pending, kept: true},
		{name: "a state without a uid, queued", status: jobs.Queued, kept: true},
		{name: "a state without a uid, running", status: jobs.Running, kept: true},
		{name: "imported, never read: nothing existed"},
	} {
		f := &jobFields{UID: types.StringValue(tc.uid), RecreateIfMissing: types.BoolValue(tc.recreate)}
		f.Status, f.StartTime = types.StringValue(tc.status), types.StringValue(tc.start)
		if tc.uid == "" {
			f.UID = types.StringNull()
		}
		if tc.start == "" {
			f.StartTime = types.StringNull()
		}
		if tc.status == "" {
			f.Status = types.StringNull()
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

// A toleration the configuration spells otherwise than an import reads it (Arena's older
// `KEY=VALUE:EFFECT,OPERATOR`) changes only the spelling, in place (the user's is kept), and the
// running job is not replaced; the plan after that is empty.
func TestAccJob_aTolerationSpelledOtherwiseAfterImportIsNotAReplacement(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	const address = "training_mpi_job.test"
	// Made outside this configuration, as the block says it.
	obj, _, err := jobs.MPIJobSpec{Name: name, Namespace: "default", Workers: 1, LauncherCommand: []string{"mpirun", "python", "/train.py"},
		Pod: jobs.PodOptions{Image: "registry.example/horovod:0.13.11", GPUResource: jobs.DefaultGPUResource,
			Tolerations: []corev1.Toleration{{Key: "ssd_node", Value: "invalid", Effect: corev1.TaintEffectNoSchedule, Operator: corev1.TolerationOpEqual}}}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	made, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	config := providerConfig() + mpiJobBlock("test", name, `  wait_for    = "created"
  tolerations = ["ssd_node=invalid:NoSchedule,Equal"]
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
