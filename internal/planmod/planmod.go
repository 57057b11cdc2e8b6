// Package planmod runs a plan modifier as the plugin framework runs it, outside the framework's
// plan: for the checks that need to know what a modifier does with a value (which change
// would replace a job, whether a modifier keeps an unchanged plan).
package planmod

import (
	"context"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Of are the plan modifiers of an attribute, block or nested object: its
// PlanModifiers field, of whatever modifier type.
func Of(s any) []any {
	field := reflect.ValueOf(s).FieldByName("PlanModifiers")
	if !field.IsValid() {
		return nil
	}
	out := make([]any, field.Len())
	for i := range out {
		out[i] = field.Index(i).Interface()
	}
	return out
}

// A Modification is what one plan modifier did with the attribute's planned value.
type Modification struct {
	// Plan and State are the attribute's values it was given; Planned, what it planned.
	Plan, State, Planned attr.Value
	Replace              bool
	Diags                diag.Diagnostics
}

// Runnable says whether Run runs a modifier of m's type.
func Runnable(m any) bool {
	switch m.(type) {
	case planmodifier.String, planmodifier.Int64, planmodifier.Bool, planmodifier.List, planmodifier.Map:
		return true
	}
	return false
}

// Run runs the plan modifier m of the attribute at p, as the framework would, on the
// attribute's values read from config, plan and state; ok is false when m is not runnable or a
// value cannot be read.
func Run(ctx context.Context, m any, p path.Path, config tfsdk.Config, plan tfsdk.Plan, state tfsdk.State) (Modification, bool) {
	switch m := m.(type) {
	case planmodifier.String:
		return modify(ctx, p, config, plan, state, func(c, pl, s types.String) (attr.Value, bool, diag.Diagnostics) {
			r := &planmodifier.StringResponse{PlanValue: pl}
			m.PlanModifyString(ctx, planmodifier.StringRequest{Path: p, Config: config, ConfigValue: c, Plan: plan, PlanValue: pl, State: state, StateValue: s}, r)
			return r.PlanValue, r.RequiresReplace, r.Diagnostics
		})
	case planmodifier.Int64:
		return modify(ctx, p, config, plan, state, func(c, pl, s types.Int64) (attr.Value, bool, diag.Diagnostics) {
			r := &planmodifier.Int64Response{PlanValue: pl}
			m.PlanModifyInt64(ctx, planmodifier.Int64Request{Path: p, Config: config, ConfigValue: c, Plan: plan, PlanValue: pl, State: state, StateValue: s}, r)
			return r.PlanValue, r.RequiresReplace, r.Diagnostics
		})
	case planmodifier.Bool:
		return modify(ctx, p, config, plan, state, func(c, pl, s types.Bool) (attr.Value, bool, diag.Diagnostics) {
			r := &planmodifier.BoolResponse{PlanValue: pl}
			m.PlanModifyBool(ctx, planmodifier.BoolRequest{Path: p, Config: config, ConfigValue: c, Plan: plan, PlanValue: pl, State: state, StateValue: s}, r)
			return r.PlanValue, r.RequiresReplace, r.Diagnostics
		})
	case planmodifier.List:
		return modify(ctx, p, config, plan, state, func(c, pl, s types.List) (attr.Value, bool, diag.Diagnostics) {
			r := &planmodifier.ListResponse{PlanValue: pl}
			m.PlanModifyList(ctx, planmodifier.ListRequest{Path: p, Config: config, ConfigValue: c, Plan: plan, PlanValue: pl, State: state, StateValue: s}, r)
			return r.PlanValue, r.RequiresReplace, r.Diagnostics
		})
	case planmodifier.Map:
		return modify(ctx, p, config, plan, state, func(c, pl, s types.Map) (attr.Value, bool, diag.Diagnostics) {
			r := &planmodifier.MapResponse{PlanValue: pl}
			m.PlanModifyMap(ctx, planmodifier.MapRequest{Path: p, Config: config, ConfigValue: c, Plan: plan, PlanValue: pl, State: state, StateValue: s}, r)
			return r.PlanValue, r.RequiresReplace, r.Diagnostics
		})
	}
	return Modification{}, false
}

// modify reads the attribute at p of config, plan and state as V and runs run on them.
func modify[V attr.Value](ctx context.Context, p path.Path, config tfsdk.Config, plan tfsdk.Plan, state tfsdk.State,
	run func(c, pl, s V) (attr.Value, bool, diag.Diagnostics)) (Modification, bool) {
	var c, pl, s V
	if config.GetAttribute(ctx, p, &c).HasError() || plan.GetAttribute(ctx, p, &pl).HasError() || state.GetAttribute(ctx, p, &s).HasError() {
		return Modification{}, false
	}
	planned, replace, diags := run(c, pl, s)
	return Modification{Plan: pl, State: s, Planned: planned, Replace: replace, Diags: diags}, true
}
