package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A job's rules for Kueue's queues, at plan time.

// validateQueueing checks at plan time what only a job with queue_name may do: wait to be
// admitted; and what it may not: be suspended by hand (Kueue owns a queued job's suspend).
func validateQueueing(ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) {
	var waitFor, queue types.String
	diags.Append(config.GetAttribute(ctx, path.Root("wait_for"), &waitFor)...)
	if _, ok := config.Schema.GetAttributes()["queue_name"]; ok {
		diags.Append(config.GetAttribute(ctx, path.Root("queue_name"), &queue)...)
	}
	for _, name := range []string{"required_topology", "preferred_topology"} {
		if _, ok := config.Schema.GetAttributes()[name]; !ok {
			continue
		}
		var topology types.Map
		diags.Append(config.GetAttribute(ctx, path.Root(name), &topology)...)
		if len(topology.Elements()) > 0 && queue.IsNull() {
			diags.AddAttributeError(path.Root(name), "Topology without a queue",
				name+" asks Kueue's Topology Aware Scheduling to place the pods, which places only the jobs it admits: it needs queue_name "+
					"(a LocalQueue of a ClusterQueue whose flavor has a topology_name).")
		}
	}
	if _, ok := config.Schema.GetAttributes()["workload_priority_class"]; ok {
		var class types.String
		diags.Append(config.GetAttribute(ctx, path.Root("workload_priority_class"), &class)...)
		if !class.IsNull() && queue.IsNull() {
			diags.AddAttributeError(path.Root("workload_priority_class"), "A Kueue priority without a queue",
				"workload_priority_class is the job's priority in Kueue's queue, which needs queue_name (a LocalQueue); without one "+
					"Kueue never sees the job. For the scheduler's priority of its pods, set priority_class_name.")
		}
	}
	if waitFor.ValueString() == waitAdmitted && queue.IsNull() {
		diags.AddAttributeError(path.Root("wait_for"), "Nothing to admit",
			`wait_for = "admitted" waits for Kueue to admit the job, which needs queue_name (a LocalQueue); without one the job is never queued.`)
	}
	if queue.ValueString() == "" {
		return
	}
	var suspend types.Bool
	diags.Append(config.GetAttribute(ctx, path.Root("suspend"), &suspend)...)
	if suspend.ValueBool() {
		diags.AddAttributeError(path.Root("suspend"), "A queued job is suspended by Kueue",
			"With queue_name, Kueue keeps the job suspended until it admits it, and would resume it despite suspend = true. "+
				"To hold queued jobs, set stop_policy = \"Hold\" on their training_local_queue or training_cluster_queue.")
	}
}
