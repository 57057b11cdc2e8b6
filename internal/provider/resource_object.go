package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// objectModel is what the Kueue resources' models share: the object's identity and timeouts.
type objectModel interface {
	// target is the object the model stands for.
	target() kube.Target
	// build is the object the model describes.
	build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics)
	// read sets the model from the object: the spec, keeping the state's words where the cluster
	// says the same in others, and the status.
	read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics
	// keepStatus copies the computed status of prior into the model (an update leaves it alone;
	// the next refresh reads it).
	keepStatus(prior objectModel)
	timeouts() timeouts.Value
	setID()
	// deleteHint says what may hold the object after its deletion.
	deleteHint() string
}

// settling is a model whose object a controller gives a status soon after it is made (MultiKueue's
// Active condition): create waits for it, up to settleTimeout, so that the state holds it.
type settling interface {
	settled(obj *unstructured.Unstructured) bool
}

// settleTimeout bounds create's wait for a status; past it the state holds none until a refresh.
const settleTimeout = 30 * time.Second

// settle is the object once settled says so, or as it is after settleTimeout (or ctx's end).
func (r *objectResource[M, PM]) settle(ctx context.Context, t kube.Target, obj *unstructured.Unstructured, settled func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, settleTimeout, false, func(ctx context.Context) (bool, error) {
		if settled(obj) {
			return true, nil
		}
		if now, err := r.client.Get(ctx, t); err == nil && now != nil {
			obj = now
		}
		return settled(obj), nil
	})
	return obj
}

// objectResource is the create, read, update, delete and import every Kueue object shares:
// create refuses an object of the name it did not make, update sends a JSON merge patch of what
// the configuration changed, delete waits until Kueue's finalizer lets the object go (a queue
// or flavor in use stays until its workloads are done), and read shows drift in every attribute.
type objectResource[M any, PM interface {
	*M
	objectModel
}] struct {
	client *kube.Client
	// declared: the Kueue objects the plan declares (kueue.Declared), this one among them once planned.
	declared *kueue.Declared
	typeName string
	// schema is the object's resource schema.
	schema func(ctx context.Context) schema.Schema
	// importID reads an import ID into a model holding just the object's identity.
	importID func(id string) (PM, error)
}

// Schema serves the schema of the object the resource manages.
func (r *objectResource[M, PM]) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.schema(ctx)
}

func (r *objectResource[M, PM]) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.typeName
}

func (r *objectResource[M, PM]) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if d := dataFrom(req.ProviderData, &resp.Diagnostics); d != nil {
		r.client, r.declared = d.client, d.declared
	}
}

// kueueTimeout is how long create, update and delete wait by default: a queue or flavor in use
// is deleted only once the workloads admitted through it are done.
const kueueTimeout = 5 * time.Minute

func (r *objectResource[M, PM]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	m := PM(new(M))
	resp.Diagnostics.Append(req.Plan.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, diags := m.build(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := m.timeouts().Create(ctx, kueueTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := m.target()
	// The write-only variables' Secret is written before the object whose pods take it.
	wo := writeOnlyOfObject(m)
	if wo != nil && !(secretWriter{r.client}).write(ctx, req.Config, t, wo, nil, &resp.Diagnostics) {
		return
	}
	created, err := r.client.Create(ctx, t, obj, youngerThan(timeout))
	if err != nil {
		resp.Diagnostics.AddError("Error creating "+t.String(), alreadyExistsDetail(t, importIDOf(t), err))
		(secretWriter{r.client}).delete(ctx, t, wo, &resp.Diagnostics)
		return
	}
	if wo != nil {
		if err := r.client.OwnJobSecret(ctx, t.Namespace, t.Name, ownerReference(created)); err != nil {
			resp.Diagnostics.AddWarning("The Secret of the write-only variables of "+t.String()+" is not owned by it",
				err.Error()+": it stays when the runtime is deleted, until destroy deletes it.")
		}
	}
	if s, ok := any(m).(settling); ok {
		created = r.settle(ctx, t, created, s.settled)
	}
	m.setID()
	resp.Diagnostics.Append(m.read(ctx, created)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
	setIdentity(ctx, resp.Identity, identityOf(m.target()), &resp.Diagnostics)
}

func (r *objectResource[M, PM]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m := PM(new(M))
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t := m.target()
	setIdentity(ctx, resp.Identity, identityOf(t), &resp.Diagnostics)
	if notRefreshed(r.client, t.String(), &resp.Diagnostics) {
		return
	}
	obj, err := r.client.Get(ctx, t)
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return
	}
	if obj == nil || obj.GetDeletionTimestamp() != nil {
		resp.State.RemoveResource(ctx)
		return
	}
	m.setID()
	// The first read after an import reads the pod attributes as the cluster says them (as a
	// job's does: podModel.imported).
	mark, diags := req.Private.GetKey(ctx, importedKey)
	resp.Diagnostics.Append(diags...)
	withPod, hasPod := any(m).(interface{ pod() *podModel })
	imported := string(mark) == "true"
	if imported && hasPod {
		withPod.pod().markImported()
	}
	resp.Diagnostics.Append(m.read(ctx, obj)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if imported {
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
	setIdentity(ctx, resp.Identity, identityOf(t), &resp.Diagnostics)
}

func (r *objectResource[M, PM]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, state := PM(new(M)), PM(new(M))
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	before, diags := state.build(ctx)
	resp.Diagnostics.Append(diags...)
	after, diags := plan.build(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.timeouts().Update(ctx, kueueTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	patch, err := jobs.MergePatch(before, after)
	if err != nil {
		resp.Diagnostics.AddError("Error computing the change to "+plan.target().String(), err.Error())
		return
	}
	t := plan.target()
	was, will := writeOnlyOfObject(state), writeOnlyOfObject(plan)
	if will != nil && (was == nil || was.Version != will.Version) {
		// New values are in their Secret before the pods that take them are made.
		now, err := r.client.Get(ctx, t)
		if err != nil || now == nil {
			resp.Diagnostics.AddError("Error reading "+t.String(), fmt.Sprintf("%v (is it gone?)", err))
			return
		}
		if !(secretWriter{r.client}).update(ctx, req.Config, t, ownerReference(now), was, will, &resp.Diagnostics) {
			return
		}
	}
	if patch != nil {
		if _, err := r.client.Patch(ctx, t, k8stypes.MergePatchType, patch); err != nil {
			resp.Diagnostics.AddError("Error updating "+t.String(), goneOr(t, err))
			return
		}
	}
	if will == nil {
		(secretWriter{r.client}).delete(ctx, t, was, &resp.Diagnostics)
	}
	plan.setID()
	plan.keepStatus(state)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	setIdentity(ctx, resp.Identity, identityOf(plan.target()), &resp.Diagnostics)
}

func (r *objectResource[M, PM]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m := PM(new(M))
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := m.timeouts().Delete(ctx, kueueTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := m.target()
	if err := r.client.Delete(ctx, t, ""); err != nil {
		resp.Diagnostics.AddError("Error deleting "+t.String(), err.Error())
		return
	}
	if _, _, err := r.client.UntilGone(ctx, t); err != nil {
		resp.Diagnostics.AddError("Error waiting for "+t.String()+" to be deleted",
			fmt.Sprintf("%v. %s Raise timeouts.delete to wait longer.", err, m.deleteHint()))
		return
	}
	(secretWriter{r.client}).delete(ctx, t, writeOnlyOfObject(m), &resp.Diagnostics)
}

// writeOnlyOfObject is the write-only variables of an object's model (a TrainingRuntime's); nil
// for none.
func writeOnlyOfObject(m any) *jobs.WriteOnlyEnv {
	r, ok := m.(*runtimeModel)
	if !ok {
		return nil
	}
	return r.writeOnlyFor(r.Name.ValueString())
}

func (r *objectResource[M, PM]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if id == "" {
		names := []string{"name"}
		switch {
		case r.namespaced():
			names = append(names, "namespace")
		case r.eitherScope():
			names = append(names, "namespace?")
		}
		values, err := importIdentity(ctx, req, names...)
		if err != nil {
			resp.Diagnostics.AddError("Invalid import identity", err.Error())
			return
		}
		id = importIDOf(kube.Target{Namespace: values["namespace"], Name: values["name"]})
	}
	m, err := r.importID(id)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	t := m.target()
	setIdentity(ctx, resp.Identity, identityOf(t), &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), t.Name)...)
	if t.Namespace != "" {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), t.Namespace)...)
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte("true"))...)
}

func (r *objectResource[M, PM]) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return withDefaultsUpgraders(r.schema(ctx))
}

// IdentitySchema: a cluster-scoped Kueue object is named by its name, a LocalQueue by its
// namespace and name.
func (r *objectResource[M, PM]) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	if r.namespaced() {
		resp.IdentitySchema = namespacedIdentity("LocalQueue")
		return
	}
	if r.eitherScope() {
		resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
			"name":      identityschema.StringAttribute{RequiredForImport: true, Description: "Name of the runtime."},
			"namespace": identityschema.StringAttribute{OptionalForImport: true, Description: "Namespace of a TrainingRuntime; none for a ClusterTrainingRuntime."},
		}}
		return
	}
	resp.IdentitySchema = identityAttributes(map[string]string{"name": "Name of the object (cluster-scoped)."})
}

// namespaced says whether the resource's objects live in a namespace.
func (r *objectResource[M, PM]) namespaced() bool {
	return PM(new(M)).target().GVR == kueue.LocalQueueGVR
}

// eitherScope says whether the resource's objects are namespaced or cluster-wide as their
// configuration says (a training runtime).
func (r *objectResource[M, PM]) eitherScope() bool {
	_, ok := any(new(M)).(*runtimeModel)
	return ok
}

// identityOf is an object's identity.
func identityOf(t kube.Target) map[string]string {
	if t.Namespace == "" {
		return map[string]string{"name": t.Name}
	}
	return map[string]string{"namespace": t.Namespace, "name": t.Name}
}

// importIDOf is the import ID of a Kueue object: its name, or namespace/name.
func importIDOf(t kube.Target) string {
	if t.Namespace == "" {
		return t.Name
	}
	return t.Namespace + "/" + t.Name
}

var _ resource.ResourceWithModifyPlan = (*objectResource[clusterQueueModel, *clusterQueueModel])(nil)

// ModifyPlan refuses at plan an object its API would refuse: the object the plan describes is
// built as create and update build it, with the checks of its API's validation that the model's
// build applies (kueue's Check: Kueue's CRD rules and webhook; Trainer's runtime rules). Only a
// configuration that is wholly known is checked: a value known after apply would read as empty.
func (r *objectResource[M, PM]) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.Config.Raw.IsFullyKnown() {
		return
	}
	m := PM(new(M))
	if diags := req.Plan.Get(ctx, m); diags.HasError() {
		return
	}
	obj, diags := m.build(ctx)
	resp.Diagnostics.Append(diags...)
	if !diags.HasError() && obj != nil {
		r.declare(ctx, obj, resp)
	}
	if c, ok := any(m).(releaseChecked); ok && r.client != nil && !req.State.Raw.IsNull() && len(resp.RequiresReplace) == 0 {
		c.checkUpdate(ctx, r.client, resp)
	}
}

// releaseChecked is a model whose update in place does something else on an older release of its
// operator, which its plan warns of.
type releaseChecked interface {
	checkUpdate(ctx context.Context, c *kube.Client, resp *resource.ModifyPlanResponse)
}
