package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// workerCountPlan decides how a change of worker_count is applied: in place when the program in
// the job can take new workers while it runs (inPlace says so from the planned configuration),
// otherwise by replacing the job, which the plan shows as such. An in-place rescale of a job that
// has finished is refused at plan: nothing would run the new workers.
type workerCountPlan struct {
	// kind is the job's: one that cannot rescale (jobs.Kind.Rescalable) is always replaced.
	kind *jobs.Kind
	// inPlace reads the plan and says whether this job of a kind that can rescale does so in
	// place.
	inPlace func(ctx context.Context, plan tfsdk.Plan) (bool, diag.Diagnostics)
	// description says when it does, for the docs.
	description string
}

func (m workerCountPlan) Description(context.Context) string { return m.description }
func (m workerCountPlan) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (workerCountPlan) ModifierNoOpOnUnchangedPlan() {}

func (m workerCountPlan) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || req.PlanValue.IsUnknown() || req.PlanValue.Equal(req.StateValue) {
		return
	}
	inPlace := false
	if m.kind.Rescalable() {
		var diags diag.Diagnostics
		inPlace, diags = m.inPlace(ctx, req.Plan)
		resp.Diagnostics.Append(diags...)
		if diags.HasError() {
			return
		}
	}
	if inPlace && queued(ctx, req.Plan, &resp.Diagnostics) {
		// Kueue admitted the job's Workload for its old pod counts: on a change it evicts the
		// job and queues it again at the back, so the honest plan is a replacement.
		inPlace = false
	}
	if !inPlace {
		resp.RequiresReplace = true
		return
	}
	var status types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("status"), &status)...)
	if jobs.Finished(status.ValueString()) {
		resp.Diagnostics.AddAttributeError(req.Path, "Cannot rescale a finished job",
			fmt.Sprintf("The job has finished (%s), so no program is left to take %d workers instead of %d. To run it again "+
				"with %[2]d workers, replace it: terraform apply -replace=<address>.", status.ValueString(), req.PlanValue.ValueInt64(), req.StateValue.ValueInt64()))
	}
}

// alwaysInPlace is inPlace for jobs whose program always takes a rescale (torchelastic).
func alwaysInPlace(context.Context, tfsdk.Plan) (bool, diag.Diagnostics) { return true, nil }

// inPlaceWhenTrue is inPlace for jobs that rescale in place when a bool attribute is true.
func inPlaceWhenTrue(attribute string) func(context.Context, tfsdk.Plan) (bool, diag.Diagnostics) {
	return func(ctx context.Context, plan tfsdk.Plan) (bool, diag.Diagnostics) {
		var v types.Bool
		diags := plan.GetAttribute(ctx, path.Root(attribute), &v)
		return v.ValueBool(), diags
	}
}

// inPlaceWhenSet is inPlace for jobs that rescale in place when an object attribute is set.
func inPlaceWhenSet(attribute string) func(context.Context, tfsdk.Plan) (bool, diag.Diagnostics) {
	return func(ctx context.Context, plan tfsdk.Plan) (bool, diag.Diagnostics) {
		var v types.Object
		diags := plan.GetAttribute(ctx, path.Root(attribute), &v)
		return !v.IsNull() && !v.IsUnknown(), diags
	}
}

// boundsModel is what every job's elastic says: the fewest and most workers.
type boundsModel struct {
	MinWorkers types.Int64 `tfsdk:"min_workers"`
	MaxWorkers types.Int64 `tfsdk:"max_workers"`
}

func (b boundsModel) bounds() boundsModel { return b }

// boundsAttributes are the attributes of every job's elastic: the fewest workers the training
// goes on with (default 1) and the most it may be scaled to; what each means to the kind.
func boundsAttributes(fewest, most string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"min_workers": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(1),
			Validators:          []validator.Int64{int64validator.Between(1, 10000)},
			MarkdownDescription: "Fewest workers the training goes on with" + fewest + ". Default 1."},
		"max_workers": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 10000)},
			MarkdownDescription: "Most workers the job may be scaled to" + most + "."},
	}
}

// elasticBounds reads a job's elastic (a model holding its bounds) and checks its bounds against
// worker_count at plan time; ok says whether it is set (and read without an error).
func elasticBounds[T interface{ bounds() boundsModel }](ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) (elastic T, at path.Path, ok bool) {
	var workers types.Int64
	var e *T
	diags.Append(config.GetAttribute(ctx, path.Root("worker_count"), &workers)...)
	diags.Append(config.GetAttribute(ctx, path.Root("elastic"), &e)...)
	at = path.Root("elastic")
	if diags.HasError() || e == nil {
		return elastic, at, false
	}
	b := (*e).bounds()
	validateBounds(workers, b.MinWorkers, b.MaxWorkers, at, diags)
	return *e, at, true
}

// validateBounds checks min <= workers <= max at plan time (elastic Horovod's --min-np/--max-np,
// torchelastic's --nnodes=MIN:MAX), with the error on the attribute that breaks it.
func validateBounds(workers, lo, hi types.Int64, bounds path.Path, diags *diag.Diagnostics) {
	if workers.IsUnknown() || lo.IsUnknown() || hi.IsUnknown() || workers.IsNull() || hi.IsNull() {
		return
	}
	low := int64(1)
	if !lo.IsNull() {
		low = lo.ValueInt64()
	}
	if low > hi.ValueInt64() {
		diags.AddAttributeError(bounds.AtName("min_workers"), "Invalid worker bounds",
			fmt.Sprintf("min_workers (%d) must not exceed max_workers (%d).", low, hi.ValueInt64()))
		return
	}
	if w := workers.ValueInt64(); w < low || w > hi.ValueInt64() {
		diags.AddAttributeError(path.Root("worker_count"), "Invalid worker count",
			fmt.Sprintf("worker_count (%d) must be within min_workers (%d) and max_workers (%d).", w, low, hi.ValueInt64()))
	}
}
