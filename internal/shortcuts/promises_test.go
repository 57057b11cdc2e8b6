package shortcuts

import (
	"context"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"golang.org/x/mod/modfile"

	"github.com/kubetrain/terraform-provider-training/internal/planmod"
	training "github.com/kubetrain/terraform-provider-training/internal/provider"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// unchanged is a resource with a state that plans unchanged from its configuration.
type unchanged struct {
	r             resource.Resource
	schema        schema.Schema
	config, state tftypes.Value
}

// An unchanged state of each of the provider's resources, and its configuration: a sample of
// every attribute (shortcutstest.Sample).
func unchangedStates(t *testing.T) map[string]unchanged {
	t.Helper()
	ctx := context.Background()
	out := map[string]unchanged{}
	for _, f := range training.New("test")().Resources(ctx) {
		r := f()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &meta)
		var sch resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sch)
		state := stored(shortcutstest.Sample(sch.Schema.Type().TerraformType(ctx), 0), writeOnlyOf(sch.Schema))
		out[meta.TypeName] = unchanged{r, sch.Schema, configOf(sch.Schema.Attributes, sch.Schema.Blocks, state), state}
	}
	return out
}

// A resource that says its ModifyPlan is a no-op on an unchanged plan keeps the plan and says
// nothing: work added to such a ModifyPlan, which the server never calls on an unchanged plan,
// fails here.
func TestAResourceMarkedNoOpChangesAndSaysNothingOnAnUnchangedPlan(t *testing.T) {
	ctx := context.Background()
	marked := 0
	for name, u := range unchangedStates(t) {
		r, ok := u.r.(ResourceNoOpOnUnchangedPlan)
		if !ok {
			continue
		}
		mp, ok := r.(resource.ResourceWithModifyPlan)
		if !ok {
			continue
		}
		marked++
		state := tfsdk.State{Schema: u.schema, Raw: u.state}
		req := resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: u.schema, Raw: u.config}, Plan: tfsdk.Plan(state), State: state}
		resp := &resource.ModifyPlanResponse{Plan: tfsdk.Plan(state)}
		mp.ModifyPlan(ctx, req, resp)
		if !resp.Plan.Raw.Equal(u.state) || len(resp.Diagnostics) > 0 || len(resp.RequiresReplace) > 0 {
			t.Errorf("%s is marked ResourceNoOpOnUnchangedPlan, but its ModifyPlan on an unchanged plan changes %v, replaces %v, says %v",
				name, shortcutstest.Changed(u.state, resp.Plan.Raw), resp.RequiresReplace, resp.Diagnostics)
		}
	}
	if marked < 5 {
		t.Fatalf("only %d resources marked ResourceNoOpOnUnchangedPlan", marked)
	}
}

// A plan modifier that says it is a no-op on an unchanged plan keeps it, without replacement or
// diagnostic, wherever it is in a schema (nested attributes' modifiers are run at their first
// element): the server skips it.
func TestAModifierMarkedNoOpKeepsAnUnchangedPlan(t *testing.T) {
	ctx := context.Background()
	marked := 0
	for name, u := range unchangedStates(t) {
		state := tfsdk.State{Schema: u.schema, Raw: u.state}
		config := tfsdk.Config{Schema: u.schema, Raw: u.config}
		eachAttribute(u.schema.Attributes, path.Empty(), func(p path.Path, a schema.Attribute) {
			for _, m := range planmod.Of(a) {
				if _, ok := m.(ModifierNoOpOnUnchangedPlan); !ok {
					continue
				}
				marked++
				r, ok := planmod.Run(ctx, m, p, config, tfsdk.Plan(state), state)
				if !ok {
					t.Errorf("%s %s: the modifier %T is marked but cannot be run here", name, p, m)
					continue
				}
				if !r.Planned.Equal(r.State) || r.Replace || len(r.Diags) > 0 {
					t.Errorf("%s %s: %T is marked ModifierNoOpOnUnchangedPlan, but plans %v from %v, replace %v, says %v",
						name, p, m, r.Planned, r.State, r.Replace, r.Diags)
				}
			}
		})
	}
	if marked < 4 {
		t.Fatalf("only %d marked modifiers seen", marked)
	}
}

// eachAttribute calls f with each attribute of attrs and of their nested objects (a list's or a
// map's first element, as Sample makes them).
func eachAttribute(attrs map[string]schema.Attribute, at path.Path, f func(path.Path, schema.Attribute)) {
	for name, a := range attrs {
		p := at.AtName(name)
		f(p, a)
		switch a := a.(type) {
		case schema.SingleNestedAttribute:
			eachAttribute(a.Attributes, p, f)
		case schema.ListNestedAttribute:
			eachAttribute(a.NestedObject.Attributes, p.AtListIndex(0), f)
		case schema.MapNestedAttribute:
			eachAttribute(a.NestedObject.Attributes, p.AtMapKey("key"), f)
		}
	}
}

// warnsEveryPlan is a plan modifier, not marked, that warns on every plan.
type warnsEveryPlan struct{}

func (warnsEveryPlan) Description(context.Context) string         { return "warns" }
func (warnsEveryPlan) MarkdownDescription(context.Context) string { return "warns" }
func (warnsEveryPlan) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.Diagnostics.AddWarning("a warning on every plan", "from a plan modifier")
}

type warningResource struct{}

func (warningResource) ResourceNoOpOnUnchangedPlan() {}
func (warningResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_warning"
}
func (warningResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{warnsEveryPlan{}}},
	}}
}
func (warningResource) Create(context.Context, resource.CreateRequest, *resource.CreateResponse) {}
func (warningResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse)       {}
func (warningResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {}
func (warningResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

type warningProvider struct{}

func (warningProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "test"
}
func (warningProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}
func (warningProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}
func (warningProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
func (warningProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return warningResource{} }}
}

// A warning a plan modifier adds on an unchanged plan reaches Terraform: the server leaves such
// a plan to the framework rather than answer it without the warning.
func TestAModifiersWarningOnAnUnchangedPlanIsNotDropped(t *testing.T) {
	ctx := context.Background()
	s := newServer(warningProvider{})
	if _, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String}}
	state := tftypes.NewValue(typ, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, "a")})
	resp, err := s.PlanResourceChange(ctx, planRequest(t, "test_warning", typ, state, state))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning && d.Summary == "a warning on every plan" {
			return
		}
	}
	t.Fatalf("the modifier's warning was dropped: diagnostics %v", resp.Diagnostics)
}

// The switch: off serves the framework alone, check compares, anything else the shortcuts.
func TestTheSwitchChoosesTheServer(t *testing.T) {
	for value, want := range map[string]string{"off": "framework", "check": "checked", "": "shortcuts", "on": "shortcuts"} {
		t.Setenv(Env, value)
		got := "framework"
		switch New(training.New("test")()).(type) {
		case *server:
			got = "shortcuts"
		case checked:
			got = "checked"
		}
		if got != want {
			t.Errorf("%s=%q serves %s, want %s", Env, value, got, want)
		}
	}
}

// The shortcuts answer as FrameworkVersion answers. A framework upgrade fails here until the
// acceptance suite (whose server compares every answer with the framework's) has passed with it
// and FrameworkVersion names it.
func TestTheFrameworkIsTheOneTheShortcutsWereCheckedAgainst(t *testing.T) {
	raw, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mod.Require {
		if r.Mod.Path == "github.com/hashicorp/terraform-plugin-framework" {
			if r.Mod.Version != FrameworkVersion {
				t.Fatalf("terraform-plugin-framework is %s, the shortcuts were checked against %s: run make testacc (it compares every shortcut's answer with the framework's), then set FrameworkVersion", r.Mod.Version, FrameworkVersion)
			}
			return
		}
	}
	t.Fatal("go.mod does not require terraform-plugin-framework")
}
