package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

const defaultTimeout = 10 * time.Minute

// jobResource is what every job resource embeds: its kind and the client (set by Configure),
// and the create, read, update, delete and import every kind shares. A kind's resource file
// holds its schema and model, and CRUD methods that hand its model to these.
type jobResource struct {
	kind   *jobs.Kind
	client *kube.Client
}

// jobModel is a job resource's model, whatever its kind.
type jobModel interface {
	job() *jobFields
	pod() *podModel
	// spec is the job the model describes.
	spec(ctx context.Context) (jobs.Spec, diag.Diagnostics)
	// read sets every configurable attribute from the job object (import).
	read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics
}

// jobFields are the attributes every job resource has, under the same names.
type jobFields struct {
	ID          types.String   `tfsdk:"id"`
	UID         types.String   `tfsdk:"uid"`
	Name        types.String   `tfsdk:"name"`
	Namespace   types.String   `tfsdk:"namespace"`
	WorkerCount types.Int64    `tfsdk:"worker_count"`
	WaitFor     types.String   `tfsdk:"wait_for"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
	tensorBoardFields
	statusModel
}

func (f *jobFields) job() *jobFields { return f }

// Actions, as waits name them in errors.
const (
	actionCreate  = "create"
	actionRescale = "rescale"
)

func (r *jobResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.kind.Name + "_job"
}

func (r *jobResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// target is the resource's job object, with its pods.
func (r *jobResource) target(f *jobFields) kube.Target {
	return jobTarget(r.kind, f.Namespace.ValueString(), f.Name.ValueString())
}

// jobTarget is the job object of that kind, namespace and name, with its pods.
func jobTarget(kind *jobs.Kind, namespace, name string) kube.Target {
	return kube.Target{GVR: kind.GVR, Kind: kind.Object, Namespace: namespace, Name: name, PodSelector: kind.PodSelector(name)}
}

// dependentTargets are the Services the job owns besides its operator's; their pods are the job's.
func (r *jobResource) dependentTargets(f *jobFields) []kube.Target {
	t := r.target(f)
	var out []kube.Target
	for _, name := range r.kind.Dependents(t.Name) {
		out = append(out, kube.Target{GVR: jobs.ServiceGVR, Kind: "Service", Namespace: t.Namespace, Name: name, PodSelector: t.PodSelector})
	}
	return out
}

// create makes the job the plan describes: its dependents first (an elastic job's Services: a
// worker must never look its rendezvous up before it exists), then the job, saved in state at
// once so that nothing is ever orphaned, then the dependents handed to the job as their owner,
// its TensorBoard, and the wait.
func (r *jobResource) create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, m jobModel) {
	resp.Diagnostics.Append(req.Plan.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, diags := m.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, dependents, err := spec.Build()
	if err != nil {
		resp.Diagnostics.AddError("Invalid "+r.kind.Object, err.Error())
		return
	}
	f := m.job()
	timeout, diags := f.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	t := r.target(f)
	importID := t.Namespace + "/" + t.Name
	services := r.dependentTargets(f)
	for i, d := range dependents {
		if _, err := r.client.Create(ctx, services[i], d); err != nil {
			resp.Diagnostics.AddError("Error creating "+services[i].String(), alreadyExistsDetail(services[i], importID, err))
			r.removeUnowned(ctx, services[:i], &resp.Diagnostics)
			return
		}
	}
	created, err := r.client.Create(ctx, t, obj)
	if err != nil {
		resp.Diagnostics.AddError("Error creating "+t.String(), alreadyExistsDetail(t, importID, err))
		r.removeUnowned(ctx, services, &resp.Diagnostics)
		return
	}
	f.ID = types.StringValue(importID)
	f.UID = types.StringValue(string(created.GetUID()))
	resp.Diagnostics.Append(f.set(jobs.Status{Phase: jobs.Pending})...)
	f.TensorBoardURL = types.StringNull()
	// Saved before anything else can fail: from here on the job is in state (tainted if need be),
	// and destroy removes its dependents with it, by name, as this provider's.
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)

	if len(services) > 0 {
		owner, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{ownerReference(created)}}})
		if err != nil {
			resp.Diagnostics.AddError("Error making the owner reference of "+t.String(), err.Error())
			return
		}
		for _, st := range services {
			if _, err := r.client.Patch(ctx, st, k8stypes.MergePatchType, owner); err != nil {
				resp.Diagnostics.AddError("Error handing "+st.String()+" to its "+r.kind.Object, err.Error())
				return
			}
		}
	}
	r.createTensorBoard(ctx, &f.tensorBoardFields, created, spec.Pods(), &resp.Diagnostics)
	r.settle(ctx, m, spec, actionCreate, created, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func ownerReference(obj *unstructured.Unstructured) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		BlockOwnerDeletion: ptr.To(true)}
}

// removeUnowned deletes the dependents a failed create made or adopted (this provider's, not
// yet owned by a job; anything else of those names is left alone) and waits until they are gone,
// so that the failed apply leaves nothing behind.
func (r *jobResource) removeUnowned(ctx context.Context, targets []kube.Target, diags *diag.Diagnostics) {
	var removed []kube.Target
	for _, t := range targets {
		left, err := r.client.DeleteIf(ctx, t, func(obj *unstructured.Unstructured) bool {
			return jobs.IsManaged(obj) && len(obj.GetOwnerReferences()) == 0
		})
		if err != nil {
			diags.AddError("Error removing "+t.String()+" after the failed create", err.Error()+"; delete it, or run terraform apply again, which adopts it.")
			return
		}
		if left == nil {
			removed = append(removed, t)
		}
	}
	r.waitDeleted(ctx, diags, removed...)
}

// settle waits as wait_for says, then records the job's status.
func (r *jobResource) settle(ctx context.Context, m jobModel, spec jobs.Spec, action string, written *unstructured.Unstructured, diags *diag.Diagnostics) {
	f := m.job()
	expect := spec.Expect()
	observed, ok := r.waitOrObserve(ctx, r.target(f), f.WaitFor.ValueString(), action, written,
		func(o jobs.Observed) (bool, error) { return r.kind.Running(o, expect) }, diags)
	if !ok {
		return
	}
	status, err := r.kind.Status(observed, time.Now())
	if err != nil {
		diags.AddError("Error reading the status of "+r.target(f).String(), err.Error())
		return
	}
	diags.Append(f.set(status)...)
}

// waitOrObserve waits as wait_for says, with running deciding when a job runs, and returns what
// it last saw of the job. written is the object as the create or patch returned it: without a
// wait it is the job's state, and pods are listed only after a rescale (a new job has none yet),
// which saves a GET and a LIST per job. A failed wait is reported in diags, and the job is read
// anyway so its status can be recorded: after a timeout ctx is spent, so the read gets a moment
// of its own.
func (r *jobResource) waitOrObserve(ctx context.Context, t kube.Target, waitFor, action string, written *unstructured.Unstructured,
	running func(jobs.Observed) (bool, error), diags *diag.Diagnostics) (jobs.Observed, bool) {
	var observed jobs.Observed
	if waitFor != waitRunning && written != nil {
		observed.Object = written
		if action != actionCreate && !r.kind.InstancesFromObject {
			pods, err := r.client.Pods(ctx, t)
			if err != nil {
				diags.AddError("Error reading "+t.String(), err.Error())
				return observed, false
			}
			observed.Pods = pods
		}
		return observed, true
	}
	if waitFor == waitRunning {
		var err error
		observed, err = r.client.Until(ctx, t, running)
		if err != nil {
			diags.AddError(fmt.Sprintf("Error waiting for %s to run (%s)", t, action), waitError(err, observed))
		}
	}
	if observed.Object != nil {
		return observed, true
	}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	observed, err := r.client.Observe(readCtx, t)
	if err != nil {
		diags.AddError("Error reading "+t.String(), err.Error())
		return observed, false
	}
	if observed.Object == nil {
		diags.AddError(t.Kind+" disappeared", fmt.Sprintf("%s was deleted by someone else while Terraform was working on it.", t))
		return observed, false
	}
	return observed, true
}

// read refreshes the job: gone, finished or replaced outside Terraform (see observeForRead), or
// its worker count and status; just imported, every attribute.
func (r *jobResource) read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, m jobModel) {
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := m.job()
	t := r.target(f)
	observed := r.observeForRead(ctx, t, f, resp)
	if observed == nil {
		return
	}
	if m.pod().Image.IsNull() {
		// Just imported: everything comes from the cluster.
		resp.Diagnostics.Append(m.read(ctx, observed.Object)...)
		if resp.Diagnostics.HasError() {
			return
		}
	} else {
		workers, err := r.kind.Workers(observed.Object)
		if err != nil {
			resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
			return
		}
		f.WorkerCount = types.Int64Value(int64(workers))
	}
	f.ID = types.StringValue(t.Namespace + "/" + t.Name)
	status, err := r.kind.Status(*observed, time.Now())
	if err != nil {
		resp.Diagnostics.AddError("Error reading the status of "+t.String(), err.Error())
		return
	}
	resp.Diagnostics.Append(f.set(status)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// observeForRead reads the job for Read, with its pods unless the job object lists them. It
// returns nil when the resource is done with: the read failed, the job is gone (the resource is
// dropped from state, or kept with a warning if it had finished) or was replaced outside
// Terraform (dropped, with a warning). Otherwise the UID is updated to the job's.
func (r *jobResource) observeForRead(ctx context.Context, t kube.Target, f *jobFields, resp *resource.ReadResponse) *jobs.Observed {
	var observed jobs.Observed
	var err error
	if r.kind.InstancesFromObject {
		observed.Object, err = r.client.Get(ctx, t)
	} else {
		observed, err = r.client.Observe(ctx, t)
	}
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return nil
	}
	if observed.Object == nil {
		if !goneAfterFinishing(t, f.Status, &resp.Diagnostics) {
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

// goneAfterFinishing keeps a finished job that is gone from the cluster in state, with a
// warning, rather than letting the next apply silently run the training again.
func goneAfterFinishing(t kube.Target, status types.String, diags *diag.Diagnostics) bool {
	if !jobs.Finished(status.ValueString()) {
		return false
	}
	diags.AddWarning("Finished job is gone from the cluster",
		fmt.Sprintf("%s finished (%s) and was then deleted, for example by a TTL or its operator's retention. It stays in state so "+
			"that Terraform does not run it again; to run it again, use terraform apply -replace=<address>.", t, status.ValueString()))
	return true
}

// update is Update for every job resource, whose only in-place change is the worker count: it
// rescales the job from the state's count to the plan's within the update timeout, then waits as
// wait_for says and records the job in the plan.
func (r *jobResource) update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, plan, state jobModel) {
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, s := plan.job(), state.job()
	p.ID, p.UID = s.ID, s.UID
	spec, diags := plan.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	limit, diags := p.Timeouts.Update(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	from, to := int32(s.WorkerCount.ValueInt64()), int32(p.WorkerCount.ValueInt64())
	patched, ok := r.rescale(ctx, r.target(p), from, to, &resp.Diagnostics)
	if ok {
		r.settle(ctx, plan, spec, actionRescale, patched, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	}
}

// rescale applies the kind's guarded rescale patch and returns the patched object, or nil with
// ok when there was nothing to change. The API server answers 422 when a test op fails: the
// count is no longer the one Terraform read. That is either this rescale's own earlier attempt,
// which landed although its answer was lost (the count is already the new one: done), or
// someone else's change, which is not overwritten and is reported with the count found.
func (r *jobResource) rescale(ctx context.Context, t kube.Target, from, to int32, diags *diag.Diagnostics) (patched *unstructured.Unstructured, ok bool) {
	if from == to {
		return nil, true
	}
	patched, err := r.client.Patch(ctx, t, k8stypes.JSONPatchType, r.kind.RescalePatch(from, to))
	if err == nil {
		return patched, true
	}
	detail := err.Error()
	if apierrors.IsInvalid(err) {
		current, getErr := r.client.Get(ctx, t)
		if getErr != nil || current == nil {
			diags.AddError("Error rescaling "+t.String(), fmt.Sprintf("%v; reading the job again to see why also failed: %v", err, getErr))
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

// delete deletes the job object Terraform made (by UID), with its TensorBoard, and waits within
// the delete timeout until they and their pods are gone. Its dependents (an elastic job's
// Services) are deleted by name too, as an imported job's may have no owner reference; but only
// those that are the job's, owned by it or made by this provider: one of that name that is
// somebody else's is left alone, with a warning.
func (r *jobResource) delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse, m jobModel) {
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := m.job()
	limit, diags := f.Timeouts.Delete(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := r.target(f)
	if err := r.client.Delete(ctx, t, k8stypes.UID(f.UID.ValueString())); err != nil {
		resp.Diagnostics.AddError("Error deleting "+t.String(), err.Error())
		return
	}
	targets := f.deletionTargets(t)
	for _, dependent := range r.dependentTargets(f) {
		left, err := r.client.DeleteIf(ctx, dependent, func(obj *unstructured.Unstructured) bool { return ownedBy(obj, t) || jobs.IsManaged(obj) })
		if err != nil {
			resp.Diagnostics.AddError("Error deleting "+dependent.String(), err.Error())
			return
		}
		if left != nil {
			resp.Diagnostics.AddWarning(dependent.Kind+" left in place",
				fmt.Sprintf("%s was not created by this provider and is not owned by %s, so destroy did not delete it.", dependent, t))
			continue
		}
		targets = append(targets, dependent)
	}
	r.waitDeleted(ctx, &resp.Diagnostics, targets...)
}

// ownedBy says whether obj has an owner reference to the target's object.
func ownedBy(obj *unstructured.Unstructured, owner kube.Target) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == owner.Kind && ref.Name == owner.Name {
			return true
		}
	}
	return false
}

// waitDeleted waits until each target object and the pods its selector matches are gone.
func (r *jobResource) waitDeleted(ctx context.Context, diags *diag.Diagnostics, targets ...kube.Target) {
	for _, t := range targets {
		observed, err := r.client.UntilGone(ctx, t)
		if err == nil {
			continue
		}
		var left []string
		if observed.Object != nil {
			left = append(left, t.String())
		}
		for _, p := range observed.Pods {
			left = append(left, "pod "+p.Name)
		}
		diags.AddError("Error waiting for "+t.String()+" to be deleted",
			fmt.Sprintf("%v; still there: %s. Running terraform destroy again resumes the wait.", err, strings.Join(left, ", ")))
		return
	}
}

// ImportState takes NAMESPACE/NAME; the next refresh reads every attribute from the job.
func (r *jobResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	namespace, name, err := splitID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), namespace+"/"+name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), namespace)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for"), waitRunning)...)
}

// alreadyExistsDetail says what to do when an object cannot be created. The client has already
// adopted an object of that name if this provider created it from the same configuration, so
// one that still stands in the way is being deleted, is a leftover from another configuration,
// or is somebody else's: the provider does not take it over silently.
func alreadyExistsDetail(t kube.Target, importID string, err error) string {
	var exists *kube.ExistsError
	if !errors.As(err, &exists) {
		return err.Error()
	}
	existing := exists.Existing
	switch {
	case existing != nil && existing.GetDeletionTimestamp() != nil:
		return fmt.Sprintf("%s already exists and is being deleted (an earlier destroy or replacement). Run terraform apply again once it is gone.", t)
	case existing != nil && jobs.IsManaged(existing):
		return fmt.Sprintf("%s already exists: this provider created it, but from a different configuration (perhaps an apply that was "+
			"interrupted, or another workspace). It was not changed. Take it over with: terraform import <address> %s (or delete it)", t, importID)
	}
	return fmt.Sprintf("%s already exists and was not created by this provider, so it was not changed. Choose another name, "+
		"or take the job over with: terraform import <address> %s", t, importID)
}
