package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// optionalString is s, or null when it is empty.
func optionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// optionalMap is m, or null when it is empty.
func optionalMap(ctx context.Context, m map[string]string, diags *diag.Diagnostics) types.Map {
	if len(m) == 0 {
		return types.MapNull(types.StringType)
	}
	v, d := types.MapValueFrom(ctx, types.StringType, m)
	diags.Append(d...)
	return v
}

// optionalList is l, or null when it is empty.
func optionalList(ctx context.Context, l []string, diags *diag.Diagnostics) types.List {
	if len(l) == 0 {
		return types.ListNull(types.StringType)
	}
	v, d := types.ListValueFrom(ctx, types.StringType, l)
	diags.Append(d...)
	return v
}

// mergeAttributes is the union of attribute (or attribute type) maps, later ones winning.
func mergeAttributes[V any](maps ...map[string]V) map[string]V {
	out := map[string]V{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// stringList converts a list attribute (known) to a Go slice.
func stringList(ctx context.Context, l types.List, diags *diag.Diagnostics) []string {
	var out []string
	diags.Append(l.ElementsAs(ctx, &out, true)...)
	return out
}

// mergeMaps is the union of string maps, later ones winning.
func mergeMaps(maps ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range maps {
		for k, v := range m {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
