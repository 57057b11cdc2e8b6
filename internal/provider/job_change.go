package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// What a plan changes on a job is decided by its kind's comparison (jobs.Compare), once per
// plan, here: the plan and the state are decoded once, and each attribute the plan changes is
// compared on its own, as the state's job with that one attribute planned, so that the plan
// names exactly the attributes that force a replacement. No attribute of a job resource has a
// plan modifier of its own that asks for one.

// planned is a job's plan and state, decoded once for every check of one plan.
type planned struct {
	// prior is the state's model and next the plan's; each is nil when there is none (a create,
	// a destroy) or when it could not be read.
	prior, next jobModel
	// forcing are the attributes whose change replaces the job, sorted; the plan asks Terraform
	// to replace it for each.
	forcing []string
	// rescale is the in-place rescale the plan applies, nil when none.
	rescale *jobs.Rescale
	// stop is how the job's pods stop.
	stop jobs.Stop
}

// replacing says whether the plan replaces the job.
func (p planned) replacing() bool { return len(p.forcing) > 0 }

// plan decodes the plan and the state once, and decides with the kind's comparison which of the
// attributes the plan changes replace the job; a rescale of a finished job is refused.
func (r *jobResource) plan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) planned {
	p := planned{stop: r.kind.Stops()}
	if !req.State.Raw.IsNull() {
		if m := r.newModel(); !getModel(ctx, req.State, m).HasError() {
			p.prior = m
		}
	}
	if !req.Plan.Raw.IsNull() {
		if m := r.newModel(); !getPlanModel(ctx, req.Plan, m).HasError() {
			p.next = m
		}
	}
	if p.prior == nil || req.Plan.Raw.IsNull() {
		return p
	}
	p.forcing, p.rescale = r.compareAttributes(ctx, req, p.prior)
	for _, name := range p.forcing {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root(name))
	}
	if p.rescale != nil && !p.replacing() && jobs.Finished(p.prior.job().Status.ValueString()) {
		status := p.prior.job().Status.ValueString()
		resp.Diagnostics.AddAttributeError(path.Root(countAttribute(r.kind)), "Cannot rescale a finished job",
			fmt.Sprintf("The job has finished (%s), so no program is left to take %d workers instead of %d. To run it again "+
				"with %[2]d workers, replace it: terraform apply -replace=<address>.", status, p.rescale.To, p.rescale.From))
	}
	return p
}

// countAttribute is the attribute holding a kind's worker count.
func countAttribute(k *jobs.Kind) string {
	if k == jobs.Train {
		return "num_nodes"
	}
	return "worker_count"
}

// compareAttributes compares the state's job with the job of the state and each changed
// attribute of the plan (jobs.Compare): forcing are those whose change replaces the job, and
// rescale the in-place rescale of the count's change. An attribute whose planned value is not
// known yet is compared as unset, and forces a replacement unless unset changes only what a running
// job takes (when unset changes nothing, what the value will change cannot be told); one
// the provider computes, and the configuration leaves unset, is the provider's to fill in. A plan
// whose changes are all known is compared whole too, which decides where they together do
// otherwise than each alone: a variable moved from env to sensitive_env changes no pod. A state
// whose job cannot be built cannot be changed in place: every change replaces it.
func (r *jobResource) compareAttributes(ctx context.Context, req resource.ModifyPlanRequest, prior jobModel) (forcing []string, rescale *jobs.Rescale) {
	var state, plan, config map[string]tftypes.Value
	if req.State.Raw.As(&state) != nil || req.Plan.Raw.As(&plan) != nil || req.Config.Raw.As(&config) != nil {
		return nil, nil
	}
	computed := computedOnly(req.Plan.Schema.GetAttributes())
	old, diags := prior.spec(ctx)
	if diags.HasError() {
		tflog.Debug(ctx, "the state's job cannot be built: every change replaces it", map[string]any{"error": diagError(diags).Error()})
		for name, v := range plan {
			if !computed[name] && !v.Equal(state[name]) {
				forcing = append(forcing, name)
			}
		}
		slices.Sort(forcing)
		return forcing, nil
	}
	// whole is every change the user's attributes make, when all are known.
	whole, known := map[string]tftypes.Value{}, true
	for name, v := range plan {
		if v.Equal(state[name]) || computed[name] || name == "tolerations" && sameTolerations(ctx, req.Plan, req.State) {
			// Tolerations that only change their spelling or order tolerate the same taints.
			continue
		}
		unknown := !v.IsFullyKnown()
		if unknown {
			if c, ok := config[name]; ok && c.IsNull() {
				continue
			}
			known = false
			v = tftypes.NewValue(v.Type(), nil)
		} else {
			whole[name] = v
		}
		change, err := r.compareWith(ctx, req.State, prior, map[string]tftypes.Value{name: v}, old)
		switch {
		case unknown && err == nil && !change.Replaces() && change.Patch == nil && change.Rescale == nil:
			// Unset changes nothing here, so it cannot tell what the value will change.
			tflog.Debug(ctx, "a value known only after apply replaces the job", map[string]any{"attribute": name})
			forcing = append(forcing, name)
		case err != nil:
			tflog.Debug(ctx, "a change the comparison cannot tell replaces the job", map[string]any{"attribute": name, "error": err.Error()})
			forcing = append(forcing, name)
		case change.Replaces():
			tflog.Debug(ctx, "a change replaces the job", map[string]any{"attribute": name, "why": strings.Join(change.Replace, "; ")})
			forcing = append(forcing, name)
		case change.Rescale != nil:
			rescale = change.Rescale
		}
	}
	slices.Sort(forcing)
	if !known || len(whole) < 2 {
		return forcing, rescale
	}
	change, err := r.compareWith(ctx, req.State, prior, whole, old)
	switch {
	case err != nil:
	case !change.Replaces():
		return nil, change.Rescale
	case len(forcing) == 0:
		tflog.Debug(ctx, "the plan's changes together replace the job", map[string]any{"why": strings.Join(change.Replace, "; ")})
		return slices.Sorted(maps.Keys(whole)), nil
	}
	return forcing, rescale
}

// compareWith is the comparison of the state's job (old, of the model prior) with the job of the
// state whose attributes are those planned.
func (r *jobResource) compareWith(ctx context.Context, s tfsdk.State, prior jobModel, planned map[string]tftypes.Value, old jobs.Spec) (jobs.Change, error) {
	m, err := withAttributes(ctx, prior, s.Schema.Type, planned)
	if err != nil {
		return jobs.Change{}, err
	}
	probe, ok := m.(jobModel)
	if !ok {
		return jobs.Change{}, fmt.Errorf("%T is not a job's model", m)
	}
	spec, diags := probe.spec(ctx)
	if diags.HasError() {
		return jobs.Change{}, diagError(diags)
	}
	return jobs.Compare(old, spec)
}

// computedOnly names the attributes that only the provider sets.
func computedOnly[A interface {
	IsComputed() bool
	IsOptional() bool
	IsRequired() bool
}](attributes map[string]A) map[string]bool {
	out := map[string]bool{}
	for name, a := range attributes {
		out[name] = a.IsComputed() && !a.IsOptional() && !a.IsRequired()
	}
	return out
}

// diagError is the first error of diags.
func diagError(diags diag.Diagnostics) error {
	for _, d := range diags.Errors() {
		return fmt.Errorf("%s: %s", d.Summary(), d.Detail())
	}
	return nil
}
