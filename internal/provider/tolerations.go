package provider

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// tolerationModel is the structured form, for what Arena's strings cannot say.
type tolerationModel struct {
	Key               types.String `tfsdk:"key"`
	Operator          types.String `tfsdk:"operator"`
	Value             types.String `tfsdk:"value"`
	Effect            types.String `tfsdk:"effect"`
	TolerationSeconds types.Int64  `tfsdk:"toleration_seconds"`
}

var effects = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

func tolerationBlock(role string) schema.Block {
	return schema.ListNestedBlock{
		MarkdownDescription: "A toleration in Kubernetes' own terms, for what the `tolerations` strings cannot say (a `toleration_seconds`). Applied to " + role + ".",
		PlanModifiers:       []planmodifier.List{tolerationsReplace{}},
		NestedObject: schema.NestedBlockObject{Validators: []validator.Object{tolerationObject{}}, Attributes: map[string]schema.Attribute{
			"key": schema.StringAttribute{Optional: true, Validators: []validator.String{labelKeyRule},
				MarkdownDescription: "Taint key; empty with operator `Exists` tolerates every taint."},
			"operator": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(string(corev1.TolerationOpEqual)),
				Validators:          []validator.String{stringvalidator.OneOf(string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists))},
				MarkdownDescription: "`Equal` (default) or `Exists`."},
			"value": schema.StringAttribute{Optional: true, Validators: []validator.String{labelValueRule},
				MarkdownDescription: "Taint value, with operator `Equal`."},
			"effect": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf(effects...)},
				MarkdownDescription: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`; empty matches all effects."},
			"toleration_seconds": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
				MarkdownDescription: "How long a pod stays bound to a node after a `NoExecute` taint appears."},
		}},
	}
}

// tolerationsOf are the tolerations both forms say: the strings', then the blocks'.
func tolerationsOf(ctx context.Context, strings types.List, blocks []tolerationModel, diags *diag.Diagnostics) []corev1.Toleration {
	var out []corev1.Toleration
	var tolerations []string
	diags.Append(strings.ElementsAs(ctx, &tolerations, true)...)
	for i, s := range tolerations {
		t, err := jobs.ParseToleration(s)
		if err != nil {
			diags.AddAttributeError(path.Root("tolerations").AtListIndex(i), "Invalid toleration", err.Error())
			continue
		}
		out = append(out, t)
	}
	for _, t := range blocks {
		tol := corev1.Toleration{
			Key:      t.Key.ValueString(),
			Operator: corev1.TolerationOperator(t.Operator.ValueString()),
			Value:    t.Value.ValueString(),
			Effect:   corev1.TaintEffect(t.Effect.ValueString()),
		}
		if !t.TolerationSeconds.IsNull() {
			tol.TolerationSeconds = ptr.To(t.TolerationSeconds.ValueInt64())
		}
		out = append(out, tol)
	}
	return out
}

// sameTolerations says whether two configurations of the tolerations, each in strings and
// blocks, tolerate the same: the form is the user's (an import reads the strings where one can
// say it), and a change of form alone is no change to the pods.
func sameTolerations(ctx context.Context, a, b attributeGetter) bool {
	effective := func(p attributeGetter) ([]corev1.Toleration, bool) {
		var strs types.List
		var blocks []tolerationModel
		var diags diag.Diagnostics
		diags.Append(p.GetAttribute(ctx, path.Root("tolerations"), &strs)...)
		diags.Append(p.GetAttribute(ctx, path.Root("toleration"), &blocks)...)
		if diags.HasError() || strs.IsUnknown() {
			return nil, false
		}
		for _, b := range blocks {
			if b.Key.IsUnknown() || b.Operator.IsUnknown() || b.Value.IsUnknown() || b.Effect.IsUnknown() || b.TolerationSeconds.IsUnknown() {
				return nil, false
			}
		}
		ts := normalTolerations(tolerationsOf(ctx, strs, blocks, &diags))
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

// tolerationsReplace replaces the job when its tolerations change, and not when only their form
// does (sameTolerations).
type tolerationsReplace struct{}

func (tolerationsReplace) Description(context.Context) string {
	return "replaces the job when what it tolerates changes, not when only the form (strings or blocks) does"
}

func (r tolerationsReplace) MarkdownDescription(ctx context.Context) string {
	return r.Description(ctx)
}

func (tolerationsReplace) keepsUnchangedPlan() {}

func (tolerationsReplace) PlanModifyList(ctx context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || req.PlanValue.Equal(req.StateValue) {
		return
	}
	resp.RequiresReplace = !sameTolerations(ctx, req.Plan, req.State)
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
