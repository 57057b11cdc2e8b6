package provider

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// update is Update for every job resource. Only what can change on a running job reaches it
// (everything else plans a replacement): the worker count, rescaled within the update timeout
// by the kind's guarded patch; labels, annotations and the live run-policy fields, patched on
// the job object (only what differs between the objects the state and the plan build, so
// fields others set stay; pods made from then on carry the new labels and annotations, running
// ones keep theirs, since the provider may not patch pods: see examples/rbac); dependents
// that were deleted, made again; and the TensorBoard, added, changed or removed. Then it waits
// as wait_for says, when the job was rescaled or resumed, and records the job.
func (r *jobResource) update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, plan, state jobModel) {
	resp.Diagnostics.Append(getPlanModel(ctx, req.Plan, plan)...)
	resp.Diagnostics.Append(getModel(ctx, req.State, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, s := plan.job(), state.job()
	p.ID, p.UID = s.ID, s.UID
	spec, _, dependents, ok := r.build(ctx, plan, &resp.Diagnostics)
	prior, diags := state.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if !ok || diags.HasError() {
		return
	}
	limit, diags := p.Timeouts.Update(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := r.target(p)
	// What the plan changes on the running job, as its plan decided (jobs.Compare): the count by
	// its guarded patch, and the rest merged.
	change, err := jobs.Compare(prior, spec)
	if err != nil {
		resp.Diagnostics.AddError("Error updating "+t.String(), err.Error())
		return
	}
	if change.Replaces() {
		// The plan compared the attributes one at a time and found none that replaces the job
		// (tolerations only reordered, say): what differs is patched, as planned.
		tflog.Debug(ctx, "the update patches what the comparison of the whole job would replace", map[string]any{"why": change.Replace})
	}
	jobPatch := change.Patch
	if change.Rescale == nil && jobPatch == nil && sameCompanions(plan, state) {
		// Only what Terraform alone holds changed (wait_for, timeouts, recreate_if_missing): the
		// cluster is not touched, and the job may even be gone (kept in state, see keptWhenGone).
		p.statusModel = s.statusModel
		if tp, ts := tensorBoardOf(plan), tensorBoardOf(state); tp != nil && ts != nil {
			tp.TensorBoardURL = ts.TensorBoardURL
		}
		if d, ok := plan.(withDependents); ok {
			if sd, ok := state.(withDependents); ok {
				*d.dependents() = *sd.dependents()
			}
		}
		resp.Diagnostics.Append(setModel(ctx, &resp.State, plan)...)
		r.setIdentity(ctx, resp.Identity, plan.job(), &resp.Diagnostics)
		return
	}
	// New write-only values are in their Secret before the pods that take them are made.
	if !r.secrets().update(ctx, req.Config, t, r.jobOwner(t, s.UID.ValueString()), prior.Pods().WriteOnlyEnv, spec.Pods().WriteOnlyEnv, &resp.Diagnostics) {
		return
	}
	written, ok := r.rescale(ctx, t, change.Rescale, &resp.Diagnostics)
	if !ok {
		return
	}
	if jobPatch != nil {
		if written, err = r.client.Patch(ctx, t, k8stypes.MergePatchType, jobPatch); err != nil {
			resp.Diagnostics.AddError("Error updating "+t.String(), goneOr(t, err))
			return
		}
	}
	job := written
	if job == nil {
		if job, err = r.client.Get(ctx, t); err != nil || job == nil {
			resp.Diagnostics.AddError("Error reading "+t.String(), fmt.Sprintf("%v (the job is gone?)", err))
			return
		}
	}
	if d, ok := plan.(withDependents); ok {
		*d.dependents() = r.reconcileDependents(ctx, p, job, dependents, &resp.Diagnostics)
	}
	if spec.Pods().WriteOnlyEnv == nil {
		r.secrets().delete(ctx, t, prior.Pods().WriteOnlyEnv, &resp.Diagnostics)
	}
	if tp, ts := tensorBoardOf(plan), tensorBoardOf(state); tp != nil && ts != nil {
		r.updateTensorBoard(ctx, ts, tp, job, prior.Pods(), spec.Pods(), &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	waitFor := p.WaitFor.ValueString()
	resumed := false
	if sp, ok := state.(suspendable); ok {
		if pp, ok := plan.(suspendable); ok {
			resumed = sp.suspended() && !pp.suspended()
		}
	}
	if change.Rescale == nil && !resumed {
		waitFor = waitCreated // nothing that runs changed: record the job as it is
	}
	planned := p.statusModel
	r.settle(ctx, plan, spec, actionRescale, waitFor, written, &resp.Diagnostics)
	// What the plan kept of the status (planStatus: what this update leaves alone) the apply
	// gives as planned; the next refresh reads it anew.
	p.statusModel = planned.over(p.statusModel)
	resp.Diagnostics.Append(setModel(ctx, &resp.State, plan)...)
	r.setIdentity(ctx, resp.Identity, plan.job(), &resp.Diagnostics)
}

// sameCompanions says whether the plan keeps the job's TensorBoard and dependents as the state
// has them.
func sameCompanions(plan, state jobModel) bool {
	if tp, ts := tensorBoardOf(plan), tensorBoardOf(state); tp != nil && ts != nil && !reflect.DeepEqual(tp.TensorBoard, ts.TensorBoard) {
		return false
	}
	if d, ok := plan.(withDependents); ok {
		sd, ok := state.(withDependents)
		return ok && d.dependents().Equal(*sd.dependents())
	}
	return true
}

// goneOr explains an update's error: for a job that is gone (kept in state after it had
// started), how to run it again.
func goneOr(t kube.Target, err error) string {
	if !apierrors.IsNotFound(err) {
		return err.Error()
	}
	return fmt.Sprintf("%s is gone from the cluster: it had started and was deleted outside Terraform, so it cannot be changed in place. "+
		"To run it again: terraform apply -replace=<address>, or set recreate_if_missing = true (alone) and apply twice.", t)
}

// patchDifference patches the target with the JSON merge patch that turns before into after
// (both built by this provider, from the state and from the plan; see jobs.MergePatch). It
// returns nil when nothing differs.
func (r *jobResource) patchDifference(ctx context.Context, t kube.Target, before, after *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	patch, err := jobs.MergePatch(before, after)
	if err != nil || patch == nil {
		return nil, err
	}
	return r.client.Patch(ctx, t, k8stypes.MergePatchType, patch)
}

// rescale applies the kind's guarded rescale patch (rs, nil for none) and returns the patched object, or nil with
// ok when there was nothing to change. The API server answers 422 when a test op fails: the
// count is no longer the one Terraform read. That is either this rescale's own earlier attempt,
// which landed although its answer was lost (the count is already the new one: done), or
// someone else's change, which is not overwritten and is reported with the count found.
func (r *jobResource) rescale(ctx context.Context, t kube.Target, rs *jobs.Rescale, diags *diag.Diagnostics) (patched *unstructured.Unstructured, ok bool) {
	if rs == nil {
		return nil, true
	}
	from, to := rs.From, rs.To
	patched, err := r.client.Patch(ctx, t, k8stypes.JSONPatchType, rs.Patch)
	if err == nil {
		return patched, true
	}
	detail := goneOr(t, err)
	if apierrors.IsInvalid(err) {
		current, getErr := r.client.Get(ctx, t)
		switch {
		case getErr != nil:
			diags.AddError("Error rescaling "+t.String(), fmt.Sprintf("%v; reading the job again to see why also failed: %v", err, getErr))
			return nil, false
		case current == nil:
			diags.AddError("Error rescaling "+t.String(), goneOr(t, apierrors.NewNotFound(t.GVR.GroupResource(), t.Name)))
			return nil, false
		}
		now, countErr := r.kind.Workers(current)
		switch {
		case countErr == nil && now == to:
			return current, true
		case countErr == nil && now != from:
			detail = fmt.Sprintf("%s was not rescaled from %d to %d workers: someone else changed its worker count to %d after Terraform "+
				"read it as %d. Their change was kept and nothing was changed; run terraform plan again to see the difference.",
				t, from, to, now, from)
		default:
			detail = fmt.Sprintf("%s was not rescaled from %d to %d workers: the API server rejected the patch: %v", t, from, to, err)
		}
	}
	diags.AddError("Error rescaling "+t.String(), detail)
	return nil, false
}
