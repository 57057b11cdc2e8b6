package provider

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// changePlan is the plan request of a job of the resource whose state is the job spec builds
// (with that status, and the attributes set, read as an import would not), changed by change: the
// state, the plan and the configuration (the plan).
func changePlan(t *testing.T, newResource func() resource.Resource, spec jobs.Spec, status string,
	change func(plan map[string]tftypes.Value), set ...func(state map[string]tftypes.Value)) (*jobResource, resource.ModifyPlanRequest) {
	t.Helper()
	ctx := context.Background()
	r, ok := newResource().(interface{ base() *jobResource })
	if !ok {
		t.Fatal("not a job resource")
	}
	var s resource.SchemaResponse
	newResource().Schema(ctx, resource.SchemaRequest{}, &s)
	typ, ok := s.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatal("the schema is not an object")
	}
	null := map[string]tftypes.Value{}
	for a, at := range typ.AttributeTypes {
		null[a] = tftypes.NewValue(at, nil)
	}
	state := tfsdk.State{Schema: s.Schema, Raw: tftypes.NewValue(typ, null)}
	m := r.base().newModel()
	if diags := getModel(ctx, state, m); diags.HasError() {
		t.Fatal(diags)
	}
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	if diags := m.read(ctx, obj); diags.HasError() {
		t.Fatal(diags)
	}
	m.job().Status = types.StringValue(status)
	if diags := setModel(ctx, &state, m); diags.HasError() {
		t.Fatal(diags)
	}
	var stated map[string]tftypes.Value
	if err := state.Raw.As(&stated); err != nil {
		t.Fatal(err)
	}
	stated = maps.Clone(stated) // As hands out the value's own map
	for _, s := range set {
		s(stated)
	}
	state.Raw = tftypes.NewValue(typ, stated)
	planned := maps.Clone(stated)
	change(planned)
	raw := tftypes.NewValue(typ, planned)
	return r.base(), resource.ModifyPlanRequest{State: state, Plan: tfsdk.Plan{Schema: s.Schema, Raw: raw},
		Config: tfsdk.Config{Schema: s.Schema, Raw: raw}}
}

func tfStringMap(kv ...string) tftypes.Value {
	m := map[string]tftypes.Value{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = tftypes.NewValue(tftypes.String, kv[i+1])
	}
	return tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, m)
}

func tfStringList(values ...string) tftypes.Value {
	var l []tftypes.Value
	for _, v := range values {
		l = append(l, tftypes.NewValue(tftypes.String, v))
	}
	return tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, l)
}

// The plan asks Terraform to replace a job for exactly the attributes whose change the kind's
// comparison says replaces it, rescales in place where the kind's program takes it (never a
// finished job), and takes what the changes do together over what each does alone.
func TestThePlanReplacesForExactlyTheAttributesTheComparisonSays(t *testing.T) {
	gpu, err := jobs.ParseToleration("gpu_node")
	if err != nil {
		t.Fatal(err)
	}
	ssd, err := jobs.ParseToleration("ssd_node")
	if err != nil {
		t.Fatal(err)
	}
	mpi := jobs.MPIJobSpec{Name: "c", Namespace: "ns", LauncherCommand: []string{"mpirun", "x"}, Workers: 2,
		Pod: jobs.PodOptions{Image: "i", Labels: map[string]string{"team": "a"}, Env: map[string]string{"TOKEN": "t", "EPOCHS": "3"},
			Tolerations: []corev1.Toleration{gpu, ssd}}}
	elastic := mpi
	elastic.Elastic = &jobs.MPIElastic{MinWorkers: 1, MaxWorkers: 4}
	count := func(n int64) func(map[string]tftypes.Value) {
		return func(p map[string]tftypes.Value) { p["worker_count"] = tftypes.NewValue(tftypes.Number, n) }
	}
	for _, c := range []struct {
		name    string
		spec    jobs.Spec
		status  string
		change  func(map[string]tftypes.Value)
		forcing []string
		rescale bool
		err     string
		set     func(map[string]tftypes.Value)
	}{
		{name: "elastic count", spec: elastic, status: jobs.Running, change: count(3), rescale: true},
		{name: "plain count", spec: mpi, status: jobs.Running, change: count(3), forcing: []string{"worker_count"}},
		{name: "finished elastic count", spec: elastic, status: jobs.Succeeded, change: count(3), rescale: true, err: "Cannot rescale a finished job"},
		{name: "image and labels", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["image"] = tftypes.NewValue(tftypes.String, "j")
			p["labels"] = tfStringMap("team", "b")
		}, forcing: []string{"image"}},
		{name: "labels alone", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) { p["labels"] = tfStringMap("team", "b") }},
		{name: "a variable moved to sensitive_env", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["env"] = tfStringMap("EPOCHS", "3")
			p["sensitive_env"] = tfStringMap("TOKEN", "t")
		}},
		{name: "a variable changed in env", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["env"] = tfStringMap("EPOCHS", "4", "TOKEN", "t")
		}, forcing: []string{"env"}},
		{name: "tolerations reordered", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["tolerations"] = tfStringList("ssd_node", "gpu_node")
		}},
		{name: "an image known after apply", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["image"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
		}, forcing: []string{"image"}},
		{name: "gpus known after apply, unset as in state", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["gpus"] = tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)
		}, forcing: []string{"gpus"}},
		// Unset, the labels would go, which a running job takes: whatever they become, it does.
		{name: "labels known after apply", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["labels"] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, tftypes.UnknownValue)
		}, set: func(s map[string]tftypes.Value) { s["labels"] = tfStringMap("team", "a") }},
		// Unset as in state, they change nothing: what the value will change cannot be told.
		{name: "labels known after apply where there were none", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["labels"] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, tftypes.UnknownValue)
		}, forcing: []string{"labels"}},
		// A state whose job cannot be built (bounds that cannot hold) cannot be updated in place.
		{name: "a state that does not build", spec: elastic, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["labels"] = tfStringMap("team", "b")
		}, set: func(s map[string]tftypes.Value) {
			typ, _ := s["elastic"].Type().(tftypes.Object)
			bounds := map[string]tftypes.Value{}
			for a, at := range typ.AttributeTypes {
				bounds[a] = tftypes.NewValue(at, nil)
			}
			bounds["min_workers"], bounds["max_workers"] = tftypes.NewValue(tftypes.Number, 5), tftypes.NewValue(tftypes.Number, 2)
			s["elastic"] = tftypes.NewValue(typ, bounds)
		}, forcing: []string{"labels"}},
		{name: "what only Terraform holds", spec: mpi, status: jobs.Running, change: func(p map[string]tftypes.Value) {
			p["wait_for"] = tftypes.NewValue(tftypes.String, "succeeded")
			p["protect_running"] = tftypes.NewValue(tftypes.Bool, true)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var set []func(map[string]tftypes.Value)
			if c.set != nil {
				set = append(set, c.set)
			}
			r, req := changePlan(t, newMPIJobResource, c.spec, c.status, c.change, set...)
			resp := &resource.ModifyPlanResponse{Plan: req.Plan}
			p := r.plan(context.Background(), req, resp)
			var got []string
			for _, rp := range resp.RequiresReplace {
				got = append(got, rp.String())
			}
			if !slices.Equal(got, c.forcing) || !slices.Equal(p.forcing, c.forcing) {
				t.Errorf("replaces for %v (planned %v), want %v", got, p.forcing, c.forcing)
			}
			if (p.rescale != nil) != c.rescale {
				t.Errorf("rescale %+v, want one: %v", p.rescale, c.rescale)
			}
			var errs []string
			for _, d := range resp.Diagnostics.Errors() {
				errs = append(errs, d.Summary())
			}
			if joined := strings.Join(errs, "; "); c.err == "" && joined != "" || !strings.Contains(joined, c.err) {
				t.Errorf("errors %q, want %q", joined, c.err)
			}
		})
	}
}

// A model with attributes changed is the model of the value with them changed, decoded whole,
// and the model it copies keeps its own.
func TestWithAttributesIsTheModelOfTheChangedValue(t *testing.T) {
	ctx := context.Background()
	spec := jobs.MPIJobSpec{Name: "c", Namespace: "ns", LauncherCommand: []string{"mpirun", "x"}, Workers: 2,
		Pod: jobs.PodOptions{Image: "i", Labels: map[string]string{"team": "a"}}}
	r, req := changePlan(t, newMPIJobResource, spec, jobs.Running, func(p map[string]tftypes.Value) {
		p["image"] = tftypes.NewValue(tftypes.String, "j")
		p["labels"] = tfStringMap("team", "b")
	})
	prior, whole := r.newModel(), r.newModel()
	if diags := getModel(ctx, req.State, prior); diags.HasError() {
		t.Fatal(diags)
	}
	if diags := getPlanModel(ctx, req.Plan, whole); diags.HasError() {
		t.Fatal(diags)
	}
	var plan map[string]tftypes.Value
	if err := req.Plan.Raw.As(&plan); err != nil {
		t.Fatal(err)
	}
	changed, err := withAttributes(ctx, prior, req.State.Schema.Type, map[string]tftypes.Value{"image": plan["image"], "labels": plan["labels"]})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(changed, whole) {
		t.Errorf("the model with image and labels changed is not the plan's:\n%+v\n%+v", changed, whole)
	}
	if got := prior.pod().Image.ValueString(); got != "i" {
		t.Errorf("the prior model's image became %q", got)
	}
}
