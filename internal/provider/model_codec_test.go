package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// Every job resource's model is read from a state and written back by getModel and setModel
// exactly as by the framework's Get and Set: every attribute set (and set otherwise), every
// attribute null, and each block null or empty.
func TestAJobModelConvertsAsTheFrameworkConvertsIt(t *testing.T) {
	ctx := context.Background()
	for _, job := range jobResourceSchemas(t) {
		base, meta, sch := job.base, job.meta, job.sch
		typ := sch.Schema.Type().TerraformType(ctx)
		full := shortcutstest.Sample(typ, 0)
		states := map[string]tftypes.Value{"every attribute set": full, "every attribute set otherwise": shortcutstest.Sample(typ, 1), "every attribute null": nullAttributes(full)}
		for name := range sch.Schema.Blocks {
			block := shortcutstest.Attributes(full)[name]
			states[name+" null"] = shortcutstest.WithAttribute(full, name, tftypes.NewValue(block.Type(), nil))
			if _, list := block.Type().(tftypes.List); list {
				states[name+" empty"] = shortcutstest.WithAttribute(full, name, tftypes.NewValue(block.Type(), []tftypes.Value{}))
			}
		}
		for what, v := range states {
			state := tfsdk.State{Schema: sch.Schema, Raw: v}
			want, got := base.base().newModel(), base.base().newModel()
			if diags := state.Get(ctx, want); diags.HasError() {
				t.Fatalf("%s, %s: the framework: %v", meta.TypeName, what, diags)
			}
			if diags := getModel(ctx, state, got); diags.HasError() {
				t.Fatalf("%s, %s: %v", meta.TypeName, what, diags)
			}
			if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
				t.Errorf("%s, %s: read otherwise than the framework reads it (-framework +getModel):\n%s", meta.TypeName, what, diff)
			}
			framework, ours := tfsdk.State{Schema: sch.Schema}, tfsdk.State{Schema: sch.Schema}
			if diags := framework.Set(ctx, want); diags.HasError() {
				t.Fatalf("%s, %s: the framework: %v", meta.TypeName, what, diags)
			}
			if diags := setModel(ctx, &ours, want); diags.HasError() {
				t.Fatalf("%s, %s: %v", meta.TypeName, what, diags)
			}
			if !framework.Raw.Equal(ours.Raw) {
				t.Errorf("%s, %s: written otherwise than the framework writes it: %v differ", meta.TypeName, what, shortcutstest.Changed(framework.Raw, ours.Raw))
			}
		}
	}
}

// nullAttributes is the object o with every attribute null.
func nullAttributes(o tftypes.Value) tftypes.Value {
	vals := shortcutstest.Attributes(o)
	for name, v := range vals {
		vals[name] = tftypes.NewValue(v.Type(), nil)
	}
	return tftypes.NewValue(o.Type(), vals)
}

// A plan is read into every job resource's model by getPlanModel exactly as by the framework's
// Get: every attribute unknown (a plan's computed attributes are), every attribute set, and each
// block unknown, which both refuse (a block's slice cannot hold an unknown).
func TestAJobModelIsReadFromAPlanAsTheFrameworkReadsIt(t *testing.T) {
	ctx := context.Background()
	for _, job := range jobResourceSchemas(t) {
		base, meta, sch := job.base, job.meta, job.sch
		full := shortcutstest.Sample(sch.Schema.Type().TerraformType(ctx), 0)
		unknown := shortcutstest.Attributes(full)
		for name, v := range unknown {
			if _, block := sch.Schema.Blocks[name]; !block {
				unknown[name] = tftypes.NewValue(v.Type(), tftypes.UnknownValue)
			}
		}
		plans := map[string]tftypes.Value{"every attribute set": full, "every attribute unknown": tftypes.NewValue(full.Type(), unknown)}
		for name := range sch.Schema.Blocks {
			plans[name+" unknown"] = shortcutstest.WithAttribute(full, name, tftypes.NewValue(shortcutstest.Attributes(full)[name].Type(), tftypes.UnknownValue))
		}
		for what, v := range plans {
			plan := tfsdk.Plan{Schema: sch.Schema, Raw: v}
			want, got := base.base().newModel(), base.base().newModel()
			wantDiags, gotDiags := plan.Get(ctx, want), getPlanModel(ctx, plan, got)
			if wantDiags.HasError() != gotDiags.HasError() {
				t.Errorf("%s, %s: the framework's errors %v, getPlanModel's %v", meta.TypeName, what, wantDiags, gotDiags)
				continue
			}
			if wantDiags.HasError() {
				continue
			}
			if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
				t.Errorf("%s, %s: read otherwise than the framework reads it (-framework +getPlanModel):\n%s", meta.TypeName, what, diff)
			}
		}
	}
}

// jobResourceSchema is a job resource of the provider with its metadata and schema.
type jobResourceSchema struct {
	base interface{ base() *jobResource }
	meta resource.MetadataResponse
	sch  resource.SchemaResponse
}

// jobResourceSchemas are the provider's job resources with their metadata and schemas; the test
// fails if there are fewer than five.
func jobResourceSchemas(t *testing.T) []jobResourceSchema {
	t.Helper()
	ctx := context.Background()
	var out []jobResourceSchema
	for _, f := range New("test")().Resources(ctx) {
		r := f()
		base, ok := r.(interface{ base() *jobResource })
		if !ok {
			continue
		}
		job := jobResourceSchema{base: base}
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: providerTypeName}, &job.meta)
		r.Schema(ctx, resource.SchemaRequest{}, &job.sch)
		out = append(out, job)
	}
	if len(out) < 5 {
		t.Fatalf("only %d job resources", len(out))
	}
	return out
}
