package provider

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

var effects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

// tolerationsOf are the tolerations the strings say; one that does not parse is an error on its
// index of the attribute at.
func tolerationsOf(ctx context.Context, strings types.List, at path.Path, diags *diag.Diagnostics) []corev1.Toleration {
	var out []corev1.Toleration
	var tolerations []string
	diags.Append(strings.ElementsAs(ctx, &tolerations, true)...)
	for i, s := range tolerations {
		t, err := jobs.ParseToleration(s)
		if err != nil {
			diags.AddAttributeError(at.AtListIndex(i), "Invalid toleration", err.Error())
			continue
		}
		out = append(out, t)
	}
	return out
}

// sameTolerations says whether two configurations of the tolerations tolerate the same: Arena's
// grammar has several spellings of one toleration (`k=v:NoSchedule,Equal` is `k=v:NoSchedule`),
// and a change of spelling or order alone is no change to the pods.
func sameTolerations(ctx context.Context, a, b attributeGetter) bool {
	effective := func(p attributeGetter) ([]corev1.Toleration, bool) {
		var strs types.List
		var diags diag.Diagnostics
		diags.Append(p.GetAttribute(ctx, path.Root("tolerations"), &strs)...)
		if diags.HasError() || strs.IsUnknown() {
			return nil, false
		}
		ts := normalTolerations(tolerationsOf(ctx, strs, path.Root("tolerations"), &diags))
		slices.SortFunc(ts, func(x, y corev1.Toleration) int { return cmp.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
		return ts, !diags.HasError()
	}
	x, okX := effective(a)
	y, okY := effective(b)
	return okX && okY && equality.Semantic.DeepEqual(x, y)
}

// attributeGetter is a plan, a state or a configuration.
type attributeGetter interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

// normalTolerations are tolerations as the API server compares them: an empty operator is Equal.
func normalTolerations(ts []corev1.Toleration) []corev1.Toleration {
	out := make([]corev1.Toleration, len(ts))
	for i, t := range ts {
		out[i] = t
		if out[i].Operator == "" {
			out[i].Operator = corev1.TolerationOpEqual
		}
	}
	return out
}
