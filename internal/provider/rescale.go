package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

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

// validateBounds checks the bounds' rule (jobs.CheckWorkerBounds) at plan time, with the error on
// the attribute that breaks it.
func validateBounds(workers, lo, hi types.Int64, bounds path.Path, diags *diag.Diagnostics) {
	if workers.IsUnknown() || lo.IsUnknown() || hi.IsUnknown() || workers.IsNull() || hi.IsNull() {
		return
	}
	low := int64(1)
	if !lo.IsNull() {
		low = lo.ValueInt64()
	}
	var broken *jobs.BoundsError
	if !errors.As(jobs.CheckWorkerBounds(int32(workers.ValueInt64()), int32(low), int32(hi.ValueInt64())), &broken) {
		return
	}
	if broken.Inverted() {
		diags.AddAttributeError(bounds.AtName("min_workers"), "Invalid worker bounds",
			fmt.Sprintf("min_workers (%d) must not exceed max_workers (%d).", broken.Min, broken.Max))
		return
	}
	diags.AddAttributeError(path.Root("worker_count"), "Invalid worker count",
		fmt.Sprintf("worker_count (%d) must be within min_workers (%d) and max_workers (%d).", broken.Workers, broken.Min, broken.Max))
}
