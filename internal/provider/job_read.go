package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// read refreshes the job: gone, finished or replaced outside Terraform (see observeForRead), or
// every attribute from the cluster, its dependents and TensorBoard included, so that a plan
// shows whatever was changed behind Terraform's back. The model's read keeps the state's words
// where the cluster says the same thing in others (see setFromPodOptions).
func (r *jobResource) read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, m jobModel) {
	resp.Diagnostics.Append(getModel(ctx, req.State, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := m.job()
	t := r.target(f)
	// Set first, so that every way out of the read (state kept as it was) returns it, even for a
	// state written before identity existed.
	r.setIdentity(ctx, resp.Identity, f, &resp.Diagnostics)
	if notRefreshed(r.client, t.String(), &resp.Diagnostics) {
		return
	}
	if from := movedFromOf(ctx, req.Private, &resp.Diagnostics); from != nil {
		r.readMoved(ctx, resp, m, *from)
		return
	}
	observed := r.observeForRead(ctx, t, f, resp)
	if observed == nil {
		return
	}
	mark, diags := req.Private.GetKey(ctx, importedKey)
	resp.Diagnostics.Append(diags...)
	imported := string(mark) == "true"
	if imported {
		m.pod().markImported()
	}
	live := jobs.WithoutAdmission(observed.Object, observed.Workload)
	resp.Diagnostics.Append(m.read(ctx, live)...)
	if resp.Diagnostics.HasError() {
		return
	}
	readRolesAndPatches(ctx, r.kind, m, live, &resp.Diagnostics)
	if imported {
		warnUnexpressed(ctx, r.kind, m, observed.Object, &resp.Diagnostics)
	}
	if d, ok := m.(withDependents); ok {
		*d.dependents() = r.existingDependents(ctx, f, &resp.Diagnostics)
	}
	if tb := tensorBoardOf(m); tb != nil {
		r.readTensorBoard(ctx, tb, t, m, imported, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	f.ID = types.StringValue(t.Namespace + "/" + t.Name)
	if imported {
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	}
	status, err := r.kind.Status(*observed, time.Now())
	if err != nil {
		resp.Diagnostics.AddError("Error reading the status of "+t.String(), err.Error())
		return
	}
	status.Accelerators = accelerators(ctx, m)
	resp.Diagnostics.Append(f.set(status)...)
	resp.Diagnostics.Append(setModel(ctx, &resp.State, m)...)
}

// notRefreshed says, with a warning, that the client cannot reach the cluster yet because
// provider settings are unknown until apply: a refresh then leaves the state as it was, rather
// than reading another cluster (see NewUnknownClient).
func notRefreshed(client *kube.Client, what string, diags *diag.Diagnostics) bool {
	unknown := client.UnknownSettings()
	if len(unknown) == 0 {
		return false
	}
	diags.AddWarning(what+" not refreshed",
		fmt.Sprintf("The provider settings %s are not known until apply, so %s was not read from the cluster; "+
			"this plan compares the configuration with the state as last refreshed.", strings.Join(unknown, ", "), what))
	return true
}

// observeForRead reads the job for Read, with its pods unless the job object lists them. It
// returns nil when the resource is done with: the read failed, the job is gone (the resource is
// dropped from state, or kept with a warning if it had finished) or was replaced outside
// Terraform (dropped, with a warning). Otherwise the UID is updated to the job's.
func (r *jobResource) observeForRead(ctx context.Context, t kube.Target, f *jobFields, resp *resource.ReadResponse) *jobs.Observed {
	var observed jobs.Observed
	var err error
	if r.kind.InstancesFromObject {
		observed.Object, err = r.client.Read(ctx, t)
	} else {
		observed, err = r.client.ReadObserved(ctx, t)
	}
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return nil
	}
	if observed.Object == nil {
		if !keptWhenGone(t, f, &resp.Diagnostics) {
			resp.State.RemoveResource(ctx)
		}
		return nil
	}
	if replacedOutside(t, f.UID, observed.Object, &resp.Diagnostics) {
		resp.State.RemoveResource(ctx)
		return nil
	}
	f.UID = types.StringValue(string(observed.Object.GetUID()))
	return &observed
}

// replacedOutside says, with a warning, whether obj is not the object this resource created or
// imported but one of the same name made since outside Terraform; the caller then drops the
// resource from state, so the next plan shows a create that the new object will refuse.
func replacedOutside(t kube.Target, uid types.String, obj *unstructured.Unstructured, diags *diag.Diagnostics) bool {
	// ValueString is "" for a null or unknown UID (a state from before uid was recorded).
	if uid.ValueString() == "" || k8stypes.UID(uid.ValueString()) == obj.GetUID() {
		return false
	}
	diags.AddWarning(t.Kind+" replaced outside Terraform",
		fmt.Sprintf("%s is no longer the object Terraform created (uid %s): it was deleted and made again (uid %s) outside Terraform. "+
			"Terraform no longer manages it and will not change or delete it; import it to take it over.", t, uid.ValueString(), obj.GetUID()))
	return true
}

// keptWhenGone says whether a job that is gone from the cluster stays in state. State cannot tell
// a job cleared from its queue before it ran from one that Kueue admitted, that trained for days
// unseen and that its TTL, its operator's retention or a person then removed; nothing of a job
// outlives it to say which (its Workload and events go with it). So every job that existed (its
// UID, or any status, in state) may have run, and running it again is a choice, not a side
// effect of the next apply: it stays, with a warning, unless recreate_if_missing says to drop it
// (then the next plan creates it). Only a job the state never saw (an import of a job that does
// not exist) is dropped silently.
func keptWhenGone(t kube.Target, f *jobFields, diags *diag.Diagnostics) bool {
	status := f.Status.ValueString()
	if f.UID.ValueString() == "" && status == "" {
		return false
	}
	lastSeen := status
	if lastSeen == "" {
		lastSeen = "with no status"
	}
	if f.RecreateIfMissing.ValueBool() {
		diags.AddWarning(t.Kind+" is gone from the cluster",
			fmt.Sprintf("%s may have run (last seen %s) and was then deleted outside Terraform. recreate_if_missing is true, so the next "+
				"apply creates it again and the training runs again.", t, lastSeen))
		return false
	}
	diags.AddWarning(t.Kind+" is gone from the cluster",
		fmt.Sprintf("%s existed (last seen %s) and was then deleted, by its TTL, its operator's retention, Kueue or a person; it may have "+
			"run to its end since it was last seen. It stays in state so that Terraform does not run the training again by itself. "+
			"To run it again: terraform apply -replace=<address>, or set recreate_if_missing = true. To forget it: terraform state rm <address>.",
			t, lastSeen))
	return true
}

// ImportState takes NAMESPACE/NAME; the next refresh reads every attribute from the job.
func (r *jobResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	namespace, name, err := splitID(req.ID)
	if req.ID == "" {
		var id map[string]string
		if id, err = importIdentity(ctx, req, "namespace", "name"); err == nil {
			namespace, name = id["namespace"], id["name"]
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	setIdentity(ctx, resp.Identity, map[string]string{"namespace": namespace, "name": name}, &resp.Diagnostics)
	setImported(ctx, &resp.State, namespace, name, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte("true"))...)
}

// importedKey is the key of the private state that marks a job imported and not yet read: the
// first read after an import reads every attribute as the cluster says it (podModel.imported),
// and then removes the mark.
const importedKey = "imported"

// setImported sets what an import knows of a job before its first read: its identity, and the
// defaults of what Terraform alone holds (wait_for, recreate_if_missing, fail_fast,
// min_running_seconds, protect_running). A list resource's results start the same way.
func setImported(ctx context.Context, state *tfsdk.State, namespace, name string, diags *diag.Diagnostics) {
	for attr, v := range map[string]any{"id": namespace + "/" + name, "namespace": namespace, "name": name,
		"wait_for": waitRunning, "recreate_if_missing": false, "fail_fast": string(jobs.FailFastPermanent), "min_running_seconds": int64(defaultMinRunningSeconds),
		"protect_running": false} {
		diags.Append(state.SetAttribute(ctx, path.Root(attr), v)...)
	}
}

// IdentitySchema: a job is named by its namespace and name.
func (r *jobResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = namespacedIdentity(r.kind.Object)
}

// setIdentity sets the job's identity from its fields.
func (r *jobResource) setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, f *jobFields, diags *diag.Diagnostics) {
	setIdentity(ctx, identity, map[string]string{"namespace": f.Namespace.ValueString(), "name": f.Name.ValueString()}, diags)
}
