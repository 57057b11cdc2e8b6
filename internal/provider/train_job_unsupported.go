package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// trainJobUnsupported are the shared job attributes a TrainJob cannot carry, with why.
var trainJobUnsupported = map[string]string{
	"env_from_secrets":    "Trainer's TrainJob has no envFrom: give each variable its Secret key with env_secret instead.",
	"priority_class_name": "Trainer's TrainJob cannot set a priority class: set it in the runtime's node template, or use Kueue's priorities.",
	"image_pull_policy":   "Trainer's TrainJob cannot set an image pull policy: it comes from the runtime's node template.",
	"tensorboard":         "training_train_job does not run a TensorBoard yet.",
	"roles":               "A TrainJob's roles are its runtime's: set a role's settings in the runtime.",
	"pod_patch":           "A TrainJob's pods are its runtime's, which Trainer v2.3.0 patches with a few fields only (its runtime patch): set them with the other attributes.",
	"scheduler_name":      noRuntimePatchField,
	"host_network":        noRuntimePatchField,
	"host_ipc":            noRuntimePatchField,
	"topology_spread":     noRuntimePatchField,
	"required_topology":   noRuntimePatchField,
	"preferred_topology":  noRuntimePatchField,

	"termination_grace_period_seconds": noRuntimePatchField,
}

// noRuntimePatchField is why a TrainJob refuses a pod field its runtime patch cannot carry.
const noRuntimePatchField = "Trainer v2.3.0's runtime patch, through which a TrainJob sets its pods' fields, has no place for it: set it on the runtime (training_runtime)."

// ValidateConfig rejects, at plan time, the shared attributes a TrainJob cannot carry, and
// checks queueing.
func (r *trainJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateQueueing(ctx, req.Config, &resp.Diagnostics)
	for name, why := range trainJobUnsupported {
		var v attr.Value
		if name == "tensorboard" {
			var l types.List
			resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(name), &l)...)
			if len(l.Elements()) == 0 {
				continue
			}
			v = l
		} else {
			var s attr.Value
			resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(name), &s)...)
			v = s
		}
		if b, ok := v.(types.Bool); ok && !b.IsUnknown() && !b.ValueBool() {
			continue // false asks for nothing: what import and query write
		}
		if v != nil && !v.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root(name), "Not supported by a TrainJob", why)
		}
	}
}
