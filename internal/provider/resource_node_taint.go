package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

var (
	_ resource.ResourceWithConfigure   = (*nodeTaintResource)(nil)
	_ resource.ResourceWithImportState = (*nodeTaintResource)(nil)
)

var nodeGVR = k8sschema.GroupVersionResource{Version: "v1", Resource: "nodes"}

func newNodeTaintResource() resource.Resource { return &nodeTaintResource{} }

type nodeTaintResource struct {
	client *kube.Client
}

func (r *nodeTaintResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

type nodeTaintModel struct {
	ID     types.String `tfsdk:"id"`
	Node   types.String `tfsdk:"node"`
	Key    types.String `tfsdk:"key"`
	Value  types.String `tfsdk:"value"`
	Effect types.String `tfsdk:"effect"`
	Added  types.Bool   `tfsdk:"added"`
}

func (r *nodeTaintResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_taint"
}

func (r *nodeTaintResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Version: nodeTaintSchemaVersion,
		MarkdownDescription: "One taint on one node, as `kubectl taint nodes NODE key=value:Effect` sets it. " +
			"Only this taint is managed: the node's other taints are never changed. A taint of the same key and effect that is already on " +
			"the node (whatever its value) is not taken over: create fails and says to import it; and destroy removes only a taint this resource added. A node's taints are one atomic list for server-side apply, " +
			"so the taint is added and removed by a read-modify-write guarded by the node's resourceVersion (and retried on a concurrent change), " +
			"not by apply, which would take over the whole list.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "`node/key:effect`."},
			"node": schema.StringAttribute{Required: true, PlanModifiers: replace, Validators: []validator.String{objectNameRule},
				MarkdownDescription: "Name of the node. A node that does not exist is an error."},
			"key": schema.StringAttribute{Required: true, PlanModifiers: replace, Validators: []validator.String{labelKeyRule},
				MarkdownDescription: "Taint key, e.g. `nvidia.com/gpu`."},
			"value": schema.StringAttribute{Optional: true, PlanModifiers: replace, Validators: []validator.String{labelValueRule},
				MarkdownDescription: "Taint value, e.g. `invalid`."},
			"effect": schema.StringAttribute{Required: true, PlanModifiers: replace, Validators: []validator.String{stringvalidator.OneOf(effects...)},
				MarkdownDescription: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`."},
			"added": schema.BoolAttribute{Computed: true, PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "Whether this resource added the taint: true when it was created by Terraform, false when it was imported " +
					"(an administrator's or another tool's taint). Destroy removes the taint only when it is true; otherwise it leaves the taint, " +
					"with a warning, so that a destroy never untaints nodes that someone else tainted."},
		},
	}
}

func (m nodeTaintModel) taint() corev1.Taint {
	return corev1.Taint{Key: m.Key.ValueString(), Value: m.Value.ValueString(), Effect: corev1.TaintEffect(m.Effect.ValueString())}
}

func (m nodeTaintModel) target() kube.Target {
	return kube.Target{GVR: nodeGVR, Kind: "Node", Name: m.Node.ValueString()}
}

// taintBackoff paces the retries of a taint edit that lost a race with another writer of the
// node (kubelets, the node lifecycle controller and other tools update busy nodes all the time).
var taintBackoff = wait.Backoff{Steps: 8, Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.2, Cap: 5 * time.Second}

// editTaints reads the node, computes its new taints and writes them if the node has not changed
// since the read, retrying on a concurrent change. found is false when the node does not exist.
// attempted tells edit whether an earlier write of this call may have landed.
func (r *nodeTaintResource) editTaints(ctx context.Context, t kube.Target, edit func(taints []corev1.Taint, attempted bool) ([]corev1.Taint, error)) (found bool, err error) {
	attempted := false
	err = retry.OnError(taintBackoff, apierrors.IsInvalid, func() error {
		obj, err := r.client.Get(ctx, t)
		if err != nil || obj == nil {
			return err
		}
		found = true
		var node corev1.Node
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &node); err != nil {
			return err
		}
		taints, err := edit(node.Spec.Taints, attempted)
		if err != nil {
			return err
		}
		attempted = true
		_, err = r.client.Patch(ctx, t, k8stypes.JSONPatchType, jobs.TaintPatch(node.ResourceVersion, taints))
		return err
	})
	return found, err
}

func (r *nodeTaintResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeTaintModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	taint := plan.taint()
	found, err := r.editTaints(ctx, plan.target(), func(taints []corev1.Taint, attempted bool) ([]corev1.Taint, error) {
		return jobs.WithTaint(taints, taint, attempted)
	})
	if err != nil {
		resp.Diagnostics.AddError("Error tainting node "+plan.Node.ValueString(), err.Error())
		return
	}
	if !found {
		resp.Diagnostics.AddAttributeError(path.Root("node"), "Node not found",
			fmt.Sprintf("There is no node %q in the cluster; the training_nodes data source lists them.", plan.Node.ValueString()))
		return
	}
	plan.ID = types.StringValue(plan.Node.ValueString() + "/" + plan.Key.ValueString() + ":" + plan.Effect.ValueString())
	plan.Added = types.BoolValue(true)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setIdentity(ctx, resp.Identity, plan.identity(), &resp.Diagnostics)
}

func (r *nodeTaintResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeTaintModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, state.identity(), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if notRefreshed(r.client, "the taint "+state.ID.ValueString(), &resp.Diagnostics) {
		return
	}
	obj, err := r.client.Get(ctx, state.target())
	if err != nil {
		resp.Diagnostics.AddError("Error reading node", err.Error())
		return
	}
	if obj == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	var node corev1.Node
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &node); err != nil {
		resp.Diagnostics.AddError("Error reading node", err.Error())
		return
	}
	taint, ok := jobs.FindTaint(node.Spec.Taints, state.Key.ValueString(), corev1.TaintEffect(state.Effect.ValueString()))
	if !ok {
		resp.State.RemoveResource(ctx) // removed outside Terraform: planned again
		return
	}
	state.Value = optionalString(taint.Value)
	state.ID = types.StringValue(state.Node.ValueString() + "/" + state.Key.ValueString() + ":" + state.Effect.ValueString())
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	setIdentity(ctx, resp.Identity, state.identity(), &resp.Diagnostics)
}

// Update is never called: every attribute forces replacement.
func (r *nodeTaintResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {
}

func (r *nodeTaintResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeTaintModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !state.Added.ValueBool() {
		taint := state.taint()
		resp.Diagnostics.AddWarning("Taint left on node "+state.Node.ValueString(),
			fmt.Sprintf("%s was not added by this resource (it was imported), so destroy left it on the node. "+
				"To remove it: kubectl taint nodes %s %s:%s-", taint.ToString(), state.Node.ValueString(), state.Key.ValueString(), state.Effect.ValueString()))
		return
	}
	key, effect := state.Key.ValueString(), corev1.TaintEffect(state.Effect.ValueString())
	// A node that is gone has no taint left to remove.
	if _, err := r.editTaints(ctx, state.target(), func(taints []corev1.Taint, _ bool) ([]corev1.Taint, error) {
		return jobs.WithoutTaint(taints, key, effect), nil
	}); err != nil {
		resp.Diagnostics.AddError("Error removing taint from node "+state.Node.ValueString(), err.Error())
	}
}

// ImportState takes "node/key:effect".
func (r *nodeTaintResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	node, taint, ok := strings.Cut(req.ID, "/")
	key, effect, ok2 := strings.Cut(taint, ":")
	if req.ID == "" {
		id, err := importIdentity(ctx, req, "node", "key", "effect")
		if err != nil {
			resp.Diagnostics.AddError("Invalid import identity", err.Error())
			return
		}
		node, key, effect, ok, ok2 = id["node"], id["key"], id["effect"], true, true
	}
	if !ok || !ok2 || node == "" || key == "" || effect == "" {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("import ID %q is not of the form NODE/KEY:EFFECT", req.ID))
		return
	}
	setIdentity(ctx, resp.Identity, map[string]string{"node": node, "key": key, "effect": effect}, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), node+"/"+key+":"+effect)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("node"), node)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("key"), key)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("effect"), effect)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("added"), false)...)
}

// IdentitySchema: a taint is named by its node, key and effect.
func (r *nodeTaintResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityAttributes(map[string]string{"node": "The node's name.", "key": "The taint's key.", "effect": "The taint's effect."})
}

func (m nodeTaintModel) identity() map[string]string {
	return map[string]string{"node": m.Node.ValueString(), "key": m.Key.ValueString(), "effect": m.Effect.ValueString()}
}

// nodeTaintSchemaVersion is the version of training_node_taint's schema; UpgradeState holds an
// upgrader from each earlier version (none yet: version 0 is the first).
const nodeTaintSchemaVersion = 0

func (r *nodeTaintResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{}
}
