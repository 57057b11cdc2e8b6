package provider

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// podAttributeSample is the value a pod attribute is applied with first and the value it is
// changed to, in HCL; {name} stands for the test's name, {role} for the resource's workers (a runtime's
// node) and {other} for another of its roles.
type podAttributeSample struct{ first, second string }

// podAttributeSamples holds a value of every pod attribute, valid on every resource that takes it
// and schedulable on the local cluster's GPU nodes. A pod attribute without one fails the test
// below: add it here.
var podAttributeSamples = map[string]podAttributeSample{
	"image":                {`"pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"`, `"pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime"`},
	"gpus":                 {`1`, `2`},
	"gpu_resource_name":    {`"nvidia.com/gpu"`, `"nvidia.com/mig-1g.10gb"`},
	"extended_resources":   {`{ "rdma/hca" = "1" }`, `{ "rdma/hca" = "2" }`},
	"cpu":                  {`"1"`, `"2"`},
	"memory":               {`"2Gi"`, `"4Gi"`},
	"env":                  {`{ EPOCHS = "3" }`, `{ EPOCHS = "4" }`},
	"sensitive_env":        {`{ HF_TOKEN = "first" }`, `{ HF_TOKEN = "second" }`},
	"env_secret":           {`{ WANDB_API_KEY = { secret = "wandb", key = "api-key" } }`, `{ WANDB_API_KEY = { secret = "wandb", key = "other-key" } }`},
	"env_from_secrets":     {`["wandb"]`, `["wandb", "registry"]`},
	"labels":               {`{ team = "vision" }`, `{ team = "speech" }`},
	"annotations":          {`{ owner = "ml" }`, `{ owner = "platform" }`},
	"pod_labels":           {`{ cost-center = "research" }`, `{ cost-center = "product" }`},
	"pod_annotations":      {`{ note = "first" }`, `{ note = "second" }`},
	"node_selector":        {`{ accelerator = "nvidia" }`, `{ accelerator = "nvidia", "kubernetes.io/os" = "linux" }`},
	"tolerations":          {`["gpu_node"]`, `["gpu_node", "nvidia.com/gpu"]`},
	"priority_class_name":  {`"{name}-high"`, `"{name}-low"`},
	"service_account_name": {`"{name}-first"`, `"{name}-second"`},
	"image_pull_secrets":   {`["registry"]`, `["registry", "mirror"]`},
	"image_pull_policy":    {`"Always"`, `"IfNotPresent"`},
	"data_volumes":         {`["training-data:/data"]`, `["training-data:/checkpoint"]`},
	"shm_size":             {`"1Gi"`, `"2Gi"`},
	"security_context": {
		`{ run_as_user = 1000, run_as_group = 1000, fs_group = 1000, run_as_non_root = true, seccomp_profile = "RuntimeDefault", allow_privilege_escalation = false, read_only_root_filesystem = true, drop_capabilities = ["ALL"], add_capabilities = ["IPC_LOCK"] }`,
		`{ run_as_user = 2000, run_as_group = 2000, fs_group = 2000, run_as_non_root = true, seccomp_profile = "Unconfined", allow_privilege_escalation = true, read_only_root_filesystem = false, drop_capabilities = ["NET_RAW"], add_capabilities = ["SYS_PTRACE"] }`,
	},
	"cpu_limit":                        {`false`, `true`},
	"termination_grace_period_seconds": {`120`, `300`},
	"checkpoint":                       {`{ path = "/data/ckpt", save_seconds = 30 }`, `{ path = "/checkpoint/run", save_seconds = 60 }`},
	"scheduler_name":                   {`"default-scheduler"`, `"volcano"`},
	"host_network":                     {`true`, `false`},
	"host_ipc":                         {`true`, `false`},
	"topology_spread": {
		`[{ topology_key = "kubernetes.io/hostname", when_unsatisfiable = "ScheduleAnyway" }]`,
		`[{ topology_key = "kubernetes.io/hostname", max_skew = 2, when_unsatisfiable = "ScheduleAnyway" }]`,
	},
	"pod_patch": {`{ {role} = jsonencode({ spec = { dnsConfig = { options = [{ name = "ndots", value = "2" }] } } }) }`,
		`{ {role} = jsonencode({ spec = { dnsConfig = { options = [{ name = "ndots", value = "3" }] } } }) }`},
	"roles": {`{ {other} = { cpu = "2", memory = "1Gi" } }`, `{ {other} = { cpu = "3", memory = "1Gi" } }`},
}

// podAttributesOutsideTheRoundTrip are pod attributes the round trip below leaves to tests of
// their own, with the reason.
var podAttributesOutsideTheRoundTrip = map[string]string{
	"required_topology":  "takes effect only with a queue and a topology flavor (TestAccKueue_topologyAndItsFlavor)",
	"preferred_topology": "takes effect only with a queue and a topology flavor (TestAccKueue_topologyAndItsFlavor)",
}

// podAttributeNames are the attributes of the resources' pods: the fields of podModel,
// podTemplateModel and rolesModel, and a TrainJob's pod labels and annotations.
func podAttributeNames() []string {
	names := []string{"pod_labels", "pod_annotations"}
	for _, m := range []any{podModel{}, podTemplateModel{}, rolesModel{}} {
		t := reflect.TypeOf(m)
		for i := range t.NumField() {
			if tag := t.Field(i).Tag.Get("tfsdk"); tag != "" {
				names = append(names, tag)
			}
		}
	}
	return names
}

// podRoundTrip is a resource the round trip takes through its pod attributes.
type podRoundTrip struct {
	typeName string
	// role is the name the workers take in pod_patch, other that of a role beside them.
	role, other string
	// config is the resource's configuration around the pod attributes: its other required
	// attributes, and whatever else it needs (a TrainJob's runtime).
	config func(name, podAttributes string) string
	// inPlace are the pod attributes the documentation says change without a replacement; every
	// other pod attribute replaces the resource, unless everyInPlace.
	inPlace      []string
	everyInPlace bool
	// samples replace podAttributeSamples' where the resource refuses those.
	samples map[string]podAttributeSample
}

var podRoundTrips = []podRoundTrip{
	{typeName: "training_mpi_job", role: "worker", other: "launcher", inPlace: []string{"labels", "annotations"}, config: func(name, attrs string) string {
		return fmt.Sprintf("resource \"training_mpi_job\" \"test\" {\n  name = %q\n  command = [\"mpirun\", \"python\", \"/train.py\"]\n  worker_count = 2\n  wait_for = \"created\"\n%s}\n", name, attrs)
	}},
	{typeName: "training_tf_job", role: "worker", other: "chief", inPlace: []string{"labels", "annotations"}, config: func(name, attrs string) string {
		return fmt.Sprintf("resource \"training_tf_job\" \"test\" {\n  name = %q\n  command = [\"python\", \"/train.py\"]\n  worker_count = 2\n  chief = true\n  wait_for = \"created\"\n%s}\n", name, attrs)
	}},
	{typeName: "training_pytorch_job", role: "worker", other: "master", inPlace: []string{"labels", "annotations"}, config: func(name, attrs string) string {
		return fmt.Sprintf("resource \"training_pytorch_job\" \"test\" {\n  name = %q\n  command = [\"torchrun\", \"/train.py\"]\n  worker_count = 1\n  wait_for = \"created\"\n%s}\n", name, attrs)
	}},
	{typeName: "training_elastic_job", role: "worker", other: "etcd", inPlace: []string{"labels", "annotations"}, samples: map[string]podAttributeSample{
		// FrameworkController drops a seccomp profile, which the plan refuses.
		"security_context": {`{ run_as_user = 1000, run_as_non_root = true, drop_capabilities = ["ALL"] }`, `{ run_as_user = 2000, run_as_non_root = true }`},
	}, config: func(name, attrs string) string {
		return fmt.Sprintf("resource \"training_elastic_job\" \"test\" {\n  name = %q\n  script = \"/train.py\"\n  worker_count = 2\n  elastic = { min_workers = 1, max_workers = 4 }\n  wait_for = \"created\"\n%s}\n", name, attrs)
	}},
	{typeName: "training_train_job", inPlace: []string{"labels", "annotations"}, samples: map[string]podAttributeSample{
		// The pods' labels and annotations the same as the object's, as a job of an earlier
		// release had them without pod_labels and pod_annotations: an import still tells them.
		"pod_labels":      {`{ team = "vision" }`, `{ team = "speech" }`},
		"pod_annotations": {`{ owner = "ml" }`, `{ owner = "platform" }`},
	}, config: func(name, attrs string) string {
		return torchRuntime(name) + fmt.Sprintf(`
resource "training_train_job" "test" {
  name      = %[1]q
  runtime   = training_runtime.torch.name
  num_nodes = 2
  wait_for  = "created"
%[2]s}
`, name, attrs)
	}},
	{typeName: "training_runtime", role: "node", everyInPlace: true, config: func(name, attrs string) string {
		return fmt.Sprintf("resource \"training_runtime\" \"test\" {\n  name = %q\n  framework = \"torch\"\n  command = [\"torchrun\", \"/train.py\"]\n%s}\n", name, attrs)
	}},
}

// Every pod attribute of every resource with pods (every job kind and the runtime) is set, applied,
// read back (the plan after the apply is empty), imported to the same state, changed in place
// where the documentation says so (the object is updated, not replaced), and changed everywhere
// else, where the plan must replace the resource for exactly the attributes documented to
// replace it. An attribute the resource forgets to read back fails the empty plan and the import,
// naming the resource (the subtest) and the attribute; a pod attribute added without a sample
// here fails at once.
func TestAccPodAttributes_everyResourceSetsReadsBackImportsAndChangesThemAsDocumented(t *testing.T) {
	a := newAPI(t)
	schemas := resourceSchemas(t)
	var covered []string
	for _, rt := range podRoundTrips {
		covered = append(covered, rt.typeName)
	}
	for typeName, attrs := range schemas {
		// Every resource with pods has podModel's image and GPUs.
		if !slices.Contains(covered, typeName) && attrs["image"] && attrs["gpus"] {
			t.Errorf("%s has pod attributes but no round trip in podRoundTrips", typeName)
		}
	}
	for _, rt := range podRoundTrips {
		t.Run(rt.typeName, func(t *testing.T) {
			attrs := schemas[rt.typeName]
			name := acctest.RandomWithPrefix("tf-acc-pods")
			if rt.typeName == "training_elastic_job" {
				name = elasticJobName()
			}
			var names []string
			for _, n := range podAttributeNames() {
				if _, ok := attrs[n]; !ok || podAttributesOutsideTheRoundTrip[n] != "" {
					continue
				}
				// Trainer v2.2.0 lacks a runtime patch's grace period, which these set: the plan
				// refuses them there (TestAccCompat_whatAnOlderOperatorLacksIsRefusedAtPlan).
				if previousGeneration() && rt.typeName == "training_train_job" && (n == "termination_grace_period_seconds" || n == "checkpoint") {
					continue
				}
				if _, ok := podAttributeSamples[n]; !ok {
					t.Fatalf("pod attribute %s of %s has no sample in podAttributeSamples", n, rt.typeName)
				}
				names = append(names, n)
			}
			sort.Strings(names)
			body := func(changed func(string) bool) string {
				var b strings.Builder
				for _, n := range names {
					sample, ok := rt.samples[n]
					if !ok {
						sample = podAttributeSamples[n]
					}
					v := sample.first
					if changed(n) {
						v = sample.second
					}
					fmt.Fprintf(&b, "  %s = %s\n", n, strings.NewReplacer("{name}", name, "{role}", rt.role, "{other}", rt.other).Replace(v))
				}
				return b.String()
			}
			config := func(changed func(string) bool) string {
				return providerConfig() + rt.config(name, body(changed))
			}
			nothing := func(string) bool { return false }
			inPlace := func(n string) bool { return rt.everyInPlace || slices.Contains(rt.inPlace, n) }
			every := func(string) bool { return true }
			var replacing []string
			for _, n := range names {
				if !inPlace(n) {
					replacing = append(replacing, n)
				}
			}
			// Then every attribute changes: a replacement, or where every one changes in place
			// (and so has just changed), back to the first values, in place again.
			last := config(every)
			if rt.everyInPlace {
				last = config(nothing)
			}
			address := rt.typeName + ".test"
			var uid k8stypes.UID
			objectUID := func() (k8stypes.UID, error) {
				gvr := jobs.ClusterTrainingRuntimeGVR
				ns := ""
				if kind := jobs.KindByName(strings.TrimSuffix(strings.TrimPrefix(rt.typeName, "training_"), "_job")); kind != nil {
					gvr, ns = kind.GVR, "default"
				}
				obj, err := a.dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				return obj.GetUID(), nil
			}
			tfresource.ParallelTest(t, tfresource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				PreCheck:                 func() { a.podAttributeObjects(name) },
				CheckDestroy:             checkJobsGone(a),
				Steps: []tfresource.TestStep{
					{Config: config(nothing), Check: func(*terraform.State) (err error) { uid, err = objectUID(); return err }},
					{
						ResourceName: address, ImportState: true, ImportStateId: importID(rt.typeName, name), ImportStateVerify: true,
						ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
					},
					{
						Config:           config(inPlace),
						ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate)}},
						Check: func(*terraform.State) error {
							got, err := objectUID()
							if err == nil && got != uid {
								err = fmt.Errorf("%s changed in place is a new object (uid %s, was %s)", address, got, uid)
							}
							return err
						},
					},
					{Config: last, ConfigPlanChecks: tfresource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{replacedFor{address, names, replacing}}}},
				},
			})
		})
	}
}

// replacedFor checks that the plan replaces the resource for exactly the attributes want, or
// updates it in place when want is empty.
type replacedFor struct {
	address string
	// among are the attributes the check looks at (a computed attribute that follows one of
	// them may be replaced with it).
	among, want []string
}

func (r replacedFor) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != r.address {
			continue
		}
		var got []string
		for _, p := range rc.Change.ReplacePaths {
			if steps, ok := p.([]any); ok && len(steps) > 0 {
				if s, ok := steps[0].(string); ok && slices.Contains(r.among, s) && !slices.Contains(got, s) {
					got = append(got, s)
				}
			}
		}
		sort.Strings(got)
		want := slices.Sorted(slices.Values(r.want))
		switch {
		case len(want) == 0 && !rc.Change.Actions.Update():
			resp.Error = fmt.Errorf("%s: plan %v, want an update in place", r.address, rc.Change.Actions)
		case len(want) > 0 && !rc.Change.Actions.Replace():
			resp.Error = fmt.Errorf("%s: plan %v, want a replacement for %v", r.address, rc.Change.Actions, want)
		case !slices.Equal(got, want):
			missing, extra := difference(want, got), difference(got, want)
			resp.Error = fmt.Errorf("%s: the plan replaces it for %v; documented to replace it but planned in place: %v; documented in place but replacing: %v",
				r.address, got, missing, extra)
		}
		return
	}
	resp.Error = fmt.Errorf("%s: not in the plan", r.address)
}

// difference is what a holds and b does not.
func difference(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// importID is the import ID of the round trip's resource: a runtime without a namespace is
// cluster-scoped.
func importID(typeName, name string) string {
	if typeName == "training_runtime" {
		return name
	}
	return "default/" + name
}

// resourceSchemas are the provider's resources' attributes, by type name.
func resourceSchemas(t *testing.T) map[string]map[string]bool {
	t.Helper()
	ctx := context.Background()
	out := map[string]map[string]bool{}
	for _, f := range New("test")().Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &md)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		attrs := map[string]bool{}
		for n := range s.Schema.Attributes {
			attrs[n] = true
		}
		out[md.TypeName] = attrs
	}
	return out
}

// podAttributeObjects makes what the samples name in the default namespace, where a plan check
// or the API server looks for it: the ServiceAccounts and PriorityClasses named after the test.
func (a *api) podAttributeObjects(name string) {
	a.t.Helper()
	ctx := context.Background()
	for _, sa := range []string{name + "-first", name + "-second"} {
		_, err := a.kube.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		if err != nil {
			a.t.Fatal(err)
		}
		a.t.Cleanup(func() {
			_ = a.kube.CoreV1().ServiceAccounts("default").Delete(context.Background(), sa, metav1.DeleteOptions{})
		})
	}
	for i, pc := range []string{name + "-high", name + "-low"} {
		_, err := a.kube.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc}, Value: int32(1000 - i)}, metav1.CreateOptions{})
		if err != nil {
			a.t.Fatal(err)
		}
		a.t.Cleanup(func() {
			_ = a.kube.SchedulingV1().PriorityClasses().Delete(context.Background(), pc, metav1.DeleteOptions{})
		})
	}
}
