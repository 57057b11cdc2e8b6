package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// runtimePlaced is a job model whose pods are made from a training runtime in the cluster (a
// TrainJob): the placement check reads them with it.
type runtimePlaced interface {
	// runtime reads the job's runtime: nil when it is not there yet (made by the same apply).
	runtime(ctx context.Context, c *kube.Client) (*unstructured.Unstructured, error)
}

// checkPlacement warns in the plan when no node of the cluster can host a role of the job, or
// the nodes cannot hold all its pods at once (jobs.CheckPlacement), for a job that is created or
// changed; a TrainJob's pods are those Trainer makes of it on its runtime (jobs.TrainJobRoles).
// It never fails a plan: the cluster may change before apply, and a plan without a reachable
// cluster (or without the right to list nodes or read the runtime) skips the check, with a
// debug log.
func (r *jobResource) checkPlacement(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, m jobModel) {
	if !r.placementCheck || r.client == nil || req.Plan.Raw.IsNull() || req.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	if diags := req.Plan.Get(ctx, m); diags.HasError() {
		return
	}
	var runtime *unstructured.Unstructured
	if p, ok := m.(runtimePlaced); ok {
		rt, err := p.runtime(ctx, r.client)
		if err != nil || rt == nil {
			tflog.Debug(ctx, "placement check skipped: the job's runtime cannot be read, or is made by this apply", map[string]any{"error": fmt.Sprint(err)})
			return
		}
		runtime = rt
	}
	spec, diags := m.spec(ctx)
	if diags.HasError() {
		tflog.Debug(ctx, "placement check skipped: the job is not known until apply")
		return
	}
	obj, _, err := spec.Build()
	if err != nil {
		return // the apply says why
	}
	roles, err := r.kind.Roles(obj, runtime)
	if err != nil {
		tflog.Debug(ctx, "placement check skipped", map[string]any{"error": err.Error()})
		return
	}
	nodes, err := r.client.SharedNodes(ctx)
	if err != nil {
		tflog.Debug(ctx, "placement check skipped: the nodes cannot be listed", map[string]any{"error": err.Error()})
		return
	}
	for _, w := range jobs.CheckPlacement(roles, nodes, jobs.PlacementOptions{Queued: jobs.QueueName(obj) != ""}) {
		// One summary per role: the CLI folds warnings of the same summary into one.
		resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s/%s cannot run on this cluster as it is: its %s pods", r.kind.Object, obj.GetNamespace(), obj.GetName(), w.Role),
			w.Message+" This is checked against the nodes as they are now; the apply goes ahead.")
	}
}
