package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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
