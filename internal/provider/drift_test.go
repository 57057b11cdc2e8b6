package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// statusAttributes are read anew on every refresh and apply; a plan may show them as changing.
// statusKeys are the computed status attributes every job resource shares (statusAttributes).
var statusKeys = func() map[string]bool {
	keys := map[string]bool{}
	for k := range statusAttributes() {
		keys[k] = true
	}
	return keys
}()

// expectChanges checks that the plan changes the resource by action, in exactly the attributes
// want (besides the status): a drift shows as itself, and as nothing else.
type expectChanges struct {
	address string
	action  plancheck.ResourceActionType
	want    []string
}

func (e expectChanges) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != e.address {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		unknown, _ := rc.Change.AfterUnknown.(map[string]any)
		// A replacement makes every computed attribute unknown (a new object): only what is
		// configured says why it is replaced.
		replaced := rc.Change.Actions.Replace()
		var changed []string
		for k := range before {
			if statusKeys[k] {
				continue
			}
			u, _ := unknown[k].(bool)
			if (u && !replaced) || (!u && !reflect.DeepEqual(before[k], after[k])) {
				changed = append(changed, k)
			}
		}
		slices.Sort(changed)
		want := slices.Sorted(slices.Values(e.want))
		if !slices.Equal(changed, want) {
			resp.Error = fmt.Errorf("%s: plan changes %v, want exactly %v", e.address, changed, want)
			return
		}
		var action plancheck.ResourceActionType
		switch {
		case rc.Change.Actions.Update():
			action = plancheck.ResourceActionUpdate
		case rc.Change.Actions.DestroyBeforeCreate():
			action = plancheck.ResourceActionDestroyBeforeCreate
		case rc.Change.Actions.NoOp():
			action = plancheck.ResourceActionNoop
		default:
			action = plancheck.ResourceActionType(fmt.Sprint(rc.Change.Actions))
		}
		if action != e.action {
			resp.Error = fmt.Errorf("%s: plan action %s, want %s", e.address, action, e.action)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", e.address)
}

// drift is a change made behind Terraform's back, and what the next plan must show.
type drift struct {
	name string
	// patch is a JSON patch of the job object; or do changes the cluster some other way.
	patch []map[string]any
	do    func(a *api, job string) error
	want  []string
	// replace: the attribute cannot change on a running job.
	replace bool
	// podsGo: the drift itself stops the job's pods (a suspend), so an in-place apply keeps the
	// job object but not necessarily its pods.
	podsGo bool
}

func op(kind, path string, value any) map[string]any {
	return map[string]any{"op": kind, "path": path, "value": value}
}

// commonDrifts are the changes every kind's refresh must see: pod is the JSON pointer of the
// workers' pod template.
func commonDrifts(pod string) []drift {
	return []drift{
		// The same quantity in other words, and a label someone else adds: no change.
		{name: "equivalent", patch: []map[string]any{op("replace", pod+"/spec/containers/0/resources/limits/memory", "2048Mi"),
			op("add", "/metadata/labels/added-by-someone", "x")}},
		{name: "labels", patch: []map[string]any{op("replace", "/metadata/labels/team", "other")}, want: []string{"labels"}},
		{name: "annotations", patch: []map[string]any{op("remove", "/metadata/annotations/owner", nil)}, want: []string{"annotations"}},
		{name: "tensorboard", do: func(a *api, job string) error {
			return a.kube.AppsV1().Deployments("default").Delete(context.Background(), jobs.TensorBoardName(job), metav1.DeleteOptions{})
		}, want: []string{"tensorboard", "tensorboard_url"}},
		{name: "tensorboard service type", do: func(a *api, job string) error {
			patch := []byte(`{"spec":{"type":"NodePort"}}`)
			_, err := a.kube.CoreV1().Services("default").Patch(context.Background(), jobs.TensorBoardName(job), k8stypes.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}, want: []string{"tensorboard", "tensorboard_url"}},
		{name: "image", patch: []map[string]any{op("replace", pod+"/spec/containers/0/image", "registry.example/edited:1")},
			want: []string{"image"}, replace: true},
		{name: "env", patch: []map[string]any{op("add", pod+"/spec/containers/0/env/-", map[string]any{"name": "INJECTED", "value": "1"})},
			want: []string{"env"}, replace: true},
		{name: "tolerations", patch: []map[string]any{op("add", pod+"/spec/tolerations/-", map[string]any{"key": "extra", "operator": "Exists"})},
			want: []string{"tolerations"}, replace: true},
		{name: "node selector", patch: []map[string]any{op("add", pod+"/spec/nodeSelector/zone", "b")}, want: []string{"node_selector"}, replace: true},
		// cpu is its request and its limit: a limit alone changed by hand is also a request
		// the attribute cannot say, which pod_patch reads (TestAccPodPatch_…).
		{name: "resources", patch: []map[string]any{op("replace", pod+"/spec/containers/0/resources/limits/cpu", "3"),
			op("replace", pod+"/spec/containers/0/resources/requests/cpu", "3")}, want: []string{"cpu"}, replace: true},
	}
}

// setSuspend makes suspend the configuration's: left unset, a suspend made elsewhere is not
// drift (the suspend actions make one).
const setSuspend = "  suspend       = false\n"

// kubeflowDrifts are the run policy's, for the Kubeflow kinds.
func kubeflowDrifts() []drift {
	return []drift{
		{name: "suspended", patch: []map[string]any{op("add", "/spec/runPolicy/suspend", true)}, want: []string{"suspend"}, podsGo: true},
		{name: "clean pod policy", patch: []map[string]any{op("replace", "/spec/runPolicy/cleanPodPolicy", "All")}, want: []string{"clean_pod_policy"}},
	}
}

// richAttributes configure every attribute class the drifts change, and wait only for the
// job to be accepted (what the operator makes of them is other tests' business).
const richAttributes = `  wait_for      = "created"
  cpu           = "1"
  memory        = "2Gi"
  env           = { A = "1" }
  labels        = { team = "vision" }
  annotations   = { owner = "ml" }
  node_selector = { accelerator = "nvidia" }
  data_volumes  = ["training-data:/data"]
  tensorboard = {
    log_dir = "/data/logs"
  }
`

// testDrift creates a richly configured job, then makes each drift in turn: the plan must show
// exactly the drifted attributes, in place or as a replacement as the attribute allows; the
// apply restores the job (after which the testing framework's own plan must be empty); and an
// import of the restored job must give the same state.
func testDrift(t *testing.T, kind *jobs.Kind, address, name, config string, drifts []drift) {
	a := newAPI(t)
	steps := []resource.TestStep{{Config: config}}
	for _, d := range drifts {
		check := expectChanges{address: address, action: plancheck.ResourceActionUpdate, want: d.want}
		if d.replace {
			check.action = plancheck.ResourceActionDestroyBeforeCreate
		}
		if len(d.want) == 0 {
			check.action = plancheck.ResourceActionNoop
		}
		// An in-place change puts the job back without replacing it or any of its running pods.
		var jobUID k8stypes.UID
		var pods []corev1.Pod
		steps = append(steps, resource.TestStep{
			PreConfig: func() {
				job, err := a.get(kind.GVR, "default", name)
				if err != nil {
					t.Fatalf("drift %q: %v", d.name, err)
				}
				jobUID, pods = job.GetUID(), a.pods("default", kind.PodSelector(name))
				if err := makeDrift(a, kind, name, d); err != nil {
					t.Fatalf("drift %q: %v", d.name, err)
				}
			},
			Config:           config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{check}},
			Check: func(*terraform.State) error {
				if d.replace {
					return nil
				}
				job, err := a.get(kind.GVR, "default", name)
				if err != nil {
					return err
				}
				if job.GetUID() != jobUID {
					return fmt.Errorf("drift %q: the apply replaced the job (uid %s, was %s)", d.name, job.GetUID(), jobUID)
				}
				if d.podsGo {
					return nil
				}
				now := map[k8stypes.UID]bool{}
				for _, p := range a.pods("default", kind.PodSelector(name)) {
					now[p.UID] = p.DeletionTimestamp == nil
				}
				for _, p := range pods {
					if p.DeletionTimestamp == nil && !now[p.UID] {
						return fmt.Errorf("drift %q: the in-place apply stopped pod %s", d.name, p.Name)
					}
				}
				return nil
			},
		})
	}
	steps = append(steps, resource.TestStep{
		ResourceName: address, ImportState: true, ImportStateId: "default/" + name, ImportStateVerify: true,
		// The job was just made again (wait_for = "created"): its status moves on between the two reads.
		ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
	})
	// Forgotten and imported again under the same configuration with the default wait_for
	// (Terraform's alone: an import gives the default), the plan changes nothing.
	defaultWait := strings.Replace(config, `  wait_for      = "created"`+"\n", "", 1)
	if defaultWait == config {
		t.Fatal("the configuration sets no wait_for to leave out")
	}
	steps = append(steps, reimport(address, "default/"+name, defaultWait, plancheck.ExpectEmptyPlan())...)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, kind, name),
		Steps:                    steps,
	})
}

func makeDrift(a *api, kind *jobs.Kind, name string, d drift) error {
	if d.do != nil {
		return d.do(a, name)
	}
	patch, err := json.Marshal(d.patch)
	if err != nil {
		return err
	}
	_, err = a.dyn.Resource(kind.GVR).Namespace("default").Patch(context.Background(), name, k8stypes.JSONPatchType, patch, metav1.PatchOptions{})
	return err
}

func TestAccMPIJob_driftShowsInPlan(t *testing.T) {
	name := mpiJobName()
	drifts := commonDrifts("/spec/mpiReplicaSpecs/Worker/template")
	for i := range drifts {
		if drifts[i].name == "image" {
			// The launcher has the workers' image; the workers' changed by hand, its own is its
			// role's (roles.launcher.image).
			drifts[i].want = append(drifts[i].want, "roles")
		}
	}
	testDrift(t, jobs.MPI, "training_mpi_job.test", name, mpiJobConfig(name, 2, richAttributes+setSuspend+"  tolerations = [\"dedicated=ml:NoExecute:Equal:60\"]\n"), append(drifts, kubeflowDrifts()...))
}

func TestAccTFJob_driftShowsInPlan(t *testing.T) {
	name := acctest.RandomWithPrefix("tf-acc-tf")
	testDrift(t, jobs.TF, "training_tf_job.test", name, tfJobConfig(name, 2, richAttributes+setSuspend+"  ttl_seconds_after_finished = 600\n"),
		append(commonDrifts("/spec/tfReplicaSpecs/Worker/template"), append(kubeflowDrifts(),
			drift{name: "ttl", patch: []map[string]any{op("replace", "/spec/runPolicy/ttlSecondsAfterFinished", 60)}, want: []string{"ttl_seconds_after_finished"}})...))
}

func TestAccPyTorchJob_driftShowsInPlan(t *testing.T) {
	name := acctest.RandomWithPrefix("tf-acc-pt")
	drifts := commonDrifts("/spec/pytorchReplicaSpecs/Worker/template")
	for i := range drifts {
		if drifts[i].name == "resources" || drifts[i].name == "image" {
			// The master has the workers' resources and image; the workers' changed by hand,
			// its own are its role's (roles.master).
			drifts[i].want = append(drifts[i].want, "roles")
		}
	}
	testDrift(t, jobs.PyTorch, "training_pytorch_job.test", name, pytorchJobConfig(name, 2, richAttributes+setSuspend+"  backoff_limit = 3\n"),
		append(drifts, append(kubeflowDrifts(),
			drift{name: "backoff limit", patch: []map[string]any{op("replace", "/spec/runPolicy/backoffLimit", 1)}, want: []string{"backoff_limit"}})...))
}

func TestAccElasticJob_driftShowsInPlan(t *testing.T) {
	name := elasticJobName()
	testDrift(t, jobs.Elastic, "training_elastic_job.test", name, elasticJobConfig(name, 2, richAttributes),
		append(commonDrifts("/spec/taskRoles/1/task/pod"),
			drift{name: "rendezvous Service deleted", do: func(a *api, job string) error {
				return a.kube.CoreV1().Services("default").Delete(context.Background(), job+"-etcd", metav1.DeleteOptions{})
			}, want: []string{"dependents"}},
			drift{name: "etcd NetworkPolicy deleted", do: func(a *api, job string) error {
				return a.kube.NetworkingV1().NetworkPolicies("default").Delete(context.Background(), job+"-etcd", metav1.DeleteOptions{})
			}, want: []string{"dependents"}},
			drift{name: "worker command", patch: []map[string]any{op("replace", "/spec/taskRoles/1/task/pod/spec/containers/0/command", []string{"sleep", "1"})},
				want: []string{"script", "script_args", "worker_command"}, replace: true}))
}

// reimport makes Terraform forget the job without deleting it (a `removed` block), then
// imports it back with an `import` block under the same configuration; check runs on that
// plan (an import is exact when the plan changes nothing, or only what Terraform alone holds),
// and the testing framework's own plan after the apply must be empty.
func reimport(address, id, config string, check plancheck.PlanCheck) []resource.TestStep {
	typeName, name, _ := strings.Cut(address, ".")
	block := regexp.MustCompile(`(?ms)^resource "` + typeName + `" "` + name + `" \{\n.*?^\}\n`)
	readers := regexp.MustCompile(`(?ms)^data "\w+" "\w+" \{\n[^}]*` + regexp.QuoteMeta(address) + `.*?^\}\n`)
	forgotten := readers.ReplaceAllString(block.ReplaceAllString(config, ""), "") + fmt.Sprintf(`
removed {
  from = %s
  lifecycle {
    destroy = false
  }
}
`, address)
	imported := config + fmt.Sprintf(`
import {
  to = %s
  id = %q
}
`, address, id)
	return []resource.TestStep{
		{Config: forgotten},
		{Config: imported, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{check}}},
	}
}

// A TrainJob's trainer is immutable in Trainer's API, and its runtime patches may change only
// while it is suspended and its JobSet's jobs are inactive: the drifts are what the API lets
// anyone change behind Terraform's back.
func TestAccTrainJob_driftShowsInPlan(t *testing.T) {
	name := acctest.RandomWithPrefix("tf-acc-tjd")
	const podSpec = "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template/spec"
	testDrift(t, jobs.Train, "training_train_job.test", name,
		trainJobConfig(name, 1, "  wait_for      = \"created\"\n  annotations   = { owner = \"ml\" }\n"+setSuspend), []drift{
			{name: "equivalent", patch: []map[string]any{op("add", "/metadata/labels/added-by-someone", "x")}},
			// The object's labels and annotations are its metadata: they change back in place.
			{name: "labels", patch: []map[string]any{op("replace", "/metadata/labels/team", "other")}, want: []string{"labels"}},
			{name: "annotations", patch: []map[string]any{op("remove", "/metadata/annotations/owner", nil)}, want: []string{"annotations"}},
			{name: "suspended", patch: []map[string]any{op("add", "/spec/suspend", true)}, want: []string{"suspend"}, podsGo: true},
			{name: "tolerations, suspended", do: suspendedThen(op("add", podSpec+"/tolerations/-", map[string]any{"key": "extra", "operator": "Exists"})),
				want: []string{"suspend", "tolerations"}, replace: true},
			{name: "node selector, suspended", do: suspendedThen(op("add", podSpec+"/nodeSelector", map[string]any{"zone": "b"})),
				want: []string{"suspend", "node_selector"}, replace: true},
			// The labels are read from the TrainJob object, as every kind's are from its job object;
			// the pods' are the runtime patch's, gone with it.
			{name: "runtime patch removed, suspended", do: suspendedThen(op("remove", "/spec/runtimePatches/0", nil)),
				want: []string{"suspend", "tolerations", "pod_labels"}, replace: true},
		})
}

// suspendedThen suspends a TrainJob, then applies patch once Trainer's webhook takes it: it
// refuses a runtime patch change while the job's JobSet still has an active job, which it
// reads from the JobSet's status, so the patch is retried until the suspension has gone through.
func suspendedThen(patch ...map[string]any) func(a *api, job string) error {
	return func(a *api, job string) error {
		if err := makeDrift(a, jobs.Train, job, drift{patch: []map[string]any{op("add", "/spec/suspend", true)}}); err != nil {
			return err
		}
		var refused error
		err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			refused = makeDrift(a, jobs.Train, job, drift{patch: patch})
			if refused != nil && strings.Contains(refused.Error(), "is still active") {
				return false, nil
			}
			return true, refused
		})
		if err != nil && refused != nil {
			return fmt.Errorf("patching the suspended TrainJob: %w", refused)
		}
		return err
	}
}
