package provider

import (
	"cmp"
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// spreadModel is one entry of topology_spread.
type spreadModel struct {
	TopologyKey       types.String `tfsdk:"topology_key"`
	MaxSkew           types.Int64  `tfsdk:"max_skew"`
	WhenUnsatisfiable types.String `tfsdk:"when_unsatisfiable"`
}

var spreadType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"topology_key": types.StringType, "max_skew": types.Int64Type, "when_unsatisfiable": types.StringType}}

// spreadOf is topology_spread as the plain spec.
func spreadOf(ctx context.Context, l types.List, diags *diag.Diagnostics) []jobs.Spread {
	var models []spreadModel
	diags.Append(l.ElementsAs(ctx, &models, true)...)
	var out []jobs.Spread
	for _, m := range models {
		out = append(out, jobs.Spread{TopologyKey: m.TopologyKey.ValueString(), MaxSkew: int32(m.MaxSkew.ValueInt64()),
			WhenUnsatisfiable: corev1.UnsatisfiableConstraintAction(m.WhenUnsatisfiable.ValueString())})
	}
	return out
}

// spreadValue is topology_spread as read; null for none.
func spreadValue(spread []jobs.Spread) types.List {
	if len(spread) == 0 {
		return types.ListNull(spreadType)
	}
	elements := make([]attr.Value, 0, len(spread))
	for _, s := range spread {
		elements = append(elements, types.ObjectValueMust(spreadType.AttrTypes, map[string]attr.Value{
			"topology_key": types.StringValue(s.TopologyKey), "max_skew": types.Int64Value(int64(s.MaxSkew)),
			"when_unsatisfiable": types.StringValue(string(s.WhenUnsatisfiable))}))
	}
	return types.ListValueMust(spreadType, elements)
}

// distinctSpread refuses, as the API server does, two topology_spread entries of one key and
// one when_unsatisfiable.
type distinctSpread struct{}

func (distinctSpread) Description(context.Context) string {
	return "each topology_key appears at most once with each when_unsatisfiable"
}

func (d distinctSpread) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (distinctSpread) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	var models []spreadModel
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || req.ConfigValue.ElementsAs(ctx, &models, true).HasError() {
		return
	}
	// The known entries, and where each stands in the list (an unknown one is the build's to check).
	var spread []jobs.Spread
	var at []int
	for i, m := range models {
		if m.TopologyKey.IsUnknown() || m.WhenUnsatisfiable.IsUnknown() {
			continue
		}
		spread = append(spread, jobs.Spread{TopologyKey: m.TopologyKey.ValueString(),
			WhenUnsatisfiable: corev1.UnsatisfiableConstraintAction(cmp.Or(m.WhenUnsatisfiable.ValueString(), string(corev1.DoNotSchedule)))})
		at = append(at, i)
	}
	for _, i := range jobs.RepeatedSpread(spread) {
		resp.Diagnostics.AddAttributeError(req.Path.AtListIndex(at[i]), "Invalid topology spread", jobs.SpreadRepeated(spread[i])+".")
	}
}
