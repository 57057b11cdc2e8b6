package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// A `moved` block from a training_pytorch_job to a training_train_job (Terraform 1.8 and later)
// takes the PyTorchJob's state over: the TrainJob resource holds it, marked in its private state
// as the PyTorchJob it came from (movedFromKey), until the next apply replaces it. Its refreshes
// read the PyTorchJob's status; its plan replaces it, saying whether the TrainJob resumes from the
// PyTorchJob's checkpoint; its destroy (the first half of that replacement) deletes the PyTorchJob
// and waits for its pods, which save as any stop of theirs does.

// movedFromKey is the private state of a TrainJob resource that holds a moved PyTorchJob.
const movedFromKey = "moved_from"

// movedFrom is the job a moved state came from.
type movedFrom struct {
	// Kind is the source's kind (jobs.Kind.Name).
	Kind string `json:"kind"`
}

func (m movedFrom) kind() *jobs.Kind { return jobs.KindByName(m.Kind) }

// movedFromOf reads the mark; nil for a state that was not moved.
func movedFromOf(ctx context.Context, private interface {
	GetKey(context.Context, string) ([]byte, diag.Diagnostics)
}, diags *diag.Diagnostics) *movedFrom {
	if private == nil {
		return nil
	}
	raw, d := private.GetKey(ctx, movedFromKey)
	diags.Append(d...)
	var m movedFrom
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m.kind() == nil {
		return nil
	}
	return &m
}

// movedAttributes are the attributes a PyTorchJob's state gives a TrainJob under another name.
var movedAttributes = map[string]string{"worker_count": "num_nodes", "processes_per_worker": "processes_per_node"}

// MoveState takes a training_pytorch_job's state (moveFromPyTorchJob).
func (r *trainJobResource) MoveState(ctx context.Context) []resource.StateMover {
	var source resource.SchemaResponse
	newPyTorchJobResource().Schema(ctx, resource.SchemaRequest{}, &source)
	var target resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &target)
	return []resource.StateMover{{SourceSchema: &source.Schema, StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		moveFromPyTorchJob(ctx, source.Schema, target.Schema, req, resp)
	}}}
}

// moveFromPyTorchJob makes a TrainJob's state of a PyTorchJob's: every attribute of the same name
// (worker_count, the PyTorchJob's workers beside its master, gives num_nodes, every process's
// node), its status, and the mark. An attribute set to something the TrainJob cannot say
// (untranslatable) refuses the move rather than drop it.
func moveFromPyTorchJob(ctx context.Context, from, to schema.Schema, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	if req.SourceTypeName != "training_pytorch_job" || !strings.HasSuffix(req.SourceProviderAddress, "/training") {
		return // another mover's, or none: the framework says so
	}
	if req.SourceState == nil {
		resp.Diagnostics.AddError("Cannot move training_pytorch_job", "Its state could not be read with this provider's schema: run terraform apply with the provider release that wrote it first.")
		return
	}
	var source map[string]tftypes.Value
	if err := req.SourceState.Raw.As(&source); err != nil {
		resp.Diagnostics.AddError("Cannot move training_pytorch_job", err.Error())
		return
	}
	if untranslated := untranslatable(ctx, from, to, source); len(untranslated) > 0 {
		resp.Diagnostics.AddError("Cannot move training_pytorch_job to training_train_job",
			fmt.Sprintf("The PyTorchJob sets %s, which a TrainJob has no attribute for (its runtime holds the pods' other settings): the move "+
				"would drop them. Remove them from the PyTorchJob and apply first, or set them on the TrainJob's runtime, then move.",
				strings.Join(untranslated, ", ")))
		return
	}
	object, ok := to.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		return // a schema's type is an object
	}
	target := map[string]tftypes.Value{}
	attrTypes := object.AttributeTypes
	for name, typ := range attrTypes {
		target[name] = tftypes.NewValue(typ, nil)
	}
	for name, v := range source {
		into := name
		if renamed, ok := movedAttributes[name]; ok {
			into = renamed
		}
		typ, ok := attrTypes[into]
		if !ok || !v.Type().Equal(typ) {
			continue
		}
		if name == "worker_count" && v.IsKnown() && !v.IsNull() {
			var n big.Float
			_ = v.As(&n)
			workers, _ := n.Int64()
			v = tftypes.NewValue(tftypes.Number, new(big.Float).SetInt64(workers+1)) // and the master
		}
		target[into] = v
	}
	resp.Diagnostics.Append(resp.TargetState.Set(ctx, tftypes.NewValue(to.Type().TerraformType(ctx), target))...)
	mark, _ := json.Marshal(movedFrom{Kind: jobs.PyTorch.Name})
	resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, movedFromKey, mark)...)
}

// untranslatable names the attributes of the source state that the target has not (after
// movedAttributes) and that are set to other than their default; computed-only ones are the
// source job's status, which the target has its own of.
func untranslatable(ctx context.Context, from, to schema.Schema, source map[string]tftypes.Value) []string {
	var out []string
	for name, a := range from.Attributes {
		into := name
		if renamed, ok := movedAttributes[name]; ok {
			into = renamed
		}
		v, set := source[name]
		if _, ok := to.Attributes[into]; ok || !set || v.IsNull() || !a.IsOptional() && !a.IsRequired() {
			continue
		}
		if def, err := staticDefaultOf(ctx, a); err == nil && def != nil && def.Equal(v) {
			continue
		}
		if empty(v) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// staticDefaultOf is the value of a's static default, nil without one.
func staticDefaultOf(ctx context.Context, a schema.Attribute) (*tftypes.Value, error) {
	var value interface {
		ToTerraformValue(context.Context) (tftypes.Value, error)
	}
	switch a := a.(type) {
	case schema.StringAttribute:
		if a.Default == nil {
			return nil, nil
		}
		var resp defaults.StringResponse
		a.Default.DefaultString(ctx, defaults.StringRequest{}, &resp)
		value = resp.PlanValue
	case schema.BoolAttribute:
		if a.Default == nil {
			return nil, nil
		}
		var resp defaults.BoolResponse
		a.Default.DefaultBool(ctx, defaults.BoolRequest{}, &resp)
		value = resp.PlanValue
	case schema.Int64Attribute:
		if a.Default == nil {
			return nil, nil
		}
		var resp defaults.Int64Response
		a.Default.DefaultInt64(ctx, defaults.Int64Request{}, &resp)
		value = resp.PlanValue
	default:
		return nil, nil
	}
	v, err := value.ToTerraformValue(ctx)
	return &v, err
}

// empty says whether a list, map or set value holds nothing.
func empty(v tftypes.Value) bool {
	if !v.IsKnown() {
		return false
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err == nil {
		return len(elems) == 0
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err == nil && !v.Type().Is(tftypes.Object{}) {
		return len(m) == 0
	}
	return false
}

// readMoved refreshes a state moved from another kind of job: the status of that job, which the
// next apply replaces with the TrainJob. A source job that is gone (or made again) leaves the
// state as it is: the replacement has nothing to stop.
func (r *jobResource) readMoved(ctx context.Context, resp *resource.ReadResponse, m jobModel, from movedFrom) {
	f := m.job()
	t := jobTarget(from.kind(), f.Namespace.ValueString(), f.Name.ValueString())
	observed, err := r.client.ReadObserved(ctx, t)
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return
	}
	if obj := observed.Object; obj != nil && string(obj.GetUID()) == f.UID.ValueString() {
		status, err := from.kind().Status(observed, time.Now())
		if err == nil {
			status.Accelerators = accelerators(ctx, m)
			resp.Diagnostics.Append(f.set(status)...)
		}
	}
	resp.Diagnostics.Append(setModel(ctx, &resp.State, m)...)
}

// movedTarget is the job a moved state's destroy deletes: the source job, whose UID it holds.
func movedTarget(from *movedFrom, f *jobFields) (kube.Target, bool) {
	if from == nil {
		return kube.Target{}, false
	}
	return jobTarget(from.kind(), f.Namespace.ValueString(), f.Name.ValueString()), true
}

// planMoved replaces a state moved from another kind of job, and says so: its object is the
// source job, which the replacement deletes (its pods stop as any stop of theirs does, with their
// grace to save) before the TrainJob is made in its place.
func planMoved(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) bool {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return false
	}
	from := movedFromOf(ctx, req.Private, &resp.Diagnostics)
	if from == nil {
		return false
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("uid"), types.StringUnknown())...)
	resp.RequiresReplace.Append(path.Root("uid"))
	var name, namespace types.String
	_ = req.State.GetAttribute(ctx, path.Root("name"), &name)
	_ = req.State.GetAttribute(ctx, path.Root("namespace"), &namespace)
	resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s/%s becomes a TrainJob", from.kind().Object, namespace.ValueString(), name.ValueString()),
		fmt.Sprintf("The state moved from training_%s_job: this apply deletes the %s, whose pods stop as a replacement stops them, and "+
			"creates the TrainJob in its place, on its runtime. What becomes of the training is said below.", from.Kind, from.kind().Object))
	return true
}
