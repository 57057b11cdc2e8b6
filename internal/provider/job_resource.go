package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

const defaultTimeout = 10 * time.Minute

// jobResource is what every job resource embeds: its kind and the client (set by Configure),
// and the create, read, update, delete and import every kind shares. A kind's resource file
// holds its schema and model, and CRUD methods that hand its model to these.
type jobResource struct {
	kind *jobs.Kind
	// newModel is the kind's empty model; the list resources are made from the same.
	newModel func() jobModel
	client   *kube.Client
	// placementCheck: plans warn about jobs no node can host (see checkPlacement).
	placementCheck bool
}

// jobModel is a job resource's model, whatever its kind.
type jobModel interface {
	job() *jobFields
	pod() *podModel
	// workers is the job's worker (node) count: what a rescale changes.
	workers() *types.Int64
	// spec is the job the model describes.
	spec(ctx context.Context) (jobs.Spec, diag.Diagnostics)
	// read sets every configurable attribute from the job object (import).
	read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics
}

// jobFields are the attributes every job resource has, under the same names.
type jobFields struct {
	ID        types.String   `tfsdk:"id"`
	UID       types.String   `tfsdk:"uid"`
	Name      types.String   `tfsdk:"name"`
	Namespace types.String   `tfsdk:"namespace"`
	WaitFor   types.String   `tfsdk:"wait_for"`
	Timeouts  timeouts.Value `tfsdk:"timeouts"`
	// RecreateIfMissing: a job that had started and is gone is dropped from state (so the next
	// plan creates it again) rather than kept with a warning.
	RecreateIfMissing types.Bool `tfsdk:"recreate_if_missing"`
	tensorBoardFields
	statusModel
}

func (f *jobFields) job() *jobFields { return f }

// workersField is the worker count of the kinds that say `worker_count` (a TrainJob says
// `num_nodes`, as Trainer does).
type workersField struct {
	WorkerCount types.Int64 `tfsdk:"worker_count"`
}

func (w *workersField) workers() *types.Int64 { return &w.WorkerCount }

// withDependents is a model of a kind whose job has dependents (an elastic job's Services):
// their names, as they exist in the cluster (refresh) or as the plan wants them (all).
type withDependents interface {
	dependents() *types.List
}

// dependentsAttribute lists a job's dependents as KIND/NAME: planned as wanted says from the
// plan, so that one missing from the state (deleted outside Terraform) plans an update that
// makes it again, and one no longer wanted, an update that removes it.
func dependentsAttribute(wanted func(ctx context.Context, plan tfsdk.Plan) ([]jobs.Dependent, bool, diag.Diagnostics), description string) schema.Attribute {
	return schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: description,
		PlanModifiers: []planmodifier.List{dependentsPlan{wanted}}}
}

type dependentsPlan struct {
	// wanted are the dependents the plan asks for; ok is false while they are not known.
	wanted func(ctx context.Context, plan tfsdk.Plan) (deps []jobs.Dependent, ok bool, diags diag.Diagnostics)
}

func (dependentsPlan) Description(context.Context) string {
	return "the dependents the job's settings ask for"
}
func (p dependentsPlan) MarkdownDescription(ctx context.Context) string { return p.Description(ctx) }

func (p dependentsPlan) PlanModifyList(ctx context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	deps, ok, diags := p.wanted(ctx, req.Plan)
	resp.Diagnostics.Append(diags...)
	if ok {
		resp.PlanValue = dependentsValue(deps)
	}
}

// dependentsValue lists dependents as the dependents attribute does.
func dependentsValue(deps []jobs.Dependent) types.List {
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = d.String()
	}
	return stringListValue(names)
}

// withGracePeriod is a model whose operator may take that long to delete a pod (it waits out a
// graceful deletion before forcing it): destroy's default timeout is that much longer.
type withGracePeriod interface {
	gracePeriod() time.Duration
}

// resolver is a model whose job is built from facts in the cluster as well as from its
// attributes (a TrainJob's runtime): resolve reads them before anything is created and says,
// on the attribute, why they are missing.
type resolver interface {
	resolve(ctx context.Context, c *kube.Client, diags *diag.Diagnostics) bool
}

// suspendable is a model with a run policy, which can hold its job suspended.
type suspendable interface {
	suspended() bool
}

// Actions, as waits name them in errors.
const (
	actionCreate  = "create"
	actionRescale = "rescale"
)

func (r *jobResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.kind.Name + "_job"
}

func (r *jobResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if d := dataFrom(req.ProviderData, &resp.Diagnostics); d != nil {
		r.client, r.placementCheck = d.client, d.placementCheck
	}
}

// base is the job resource every kind's resource embeds.
func (r *jobResource) base() *jobResource { return r }

// Create, Read, Update and Delete are every job resource's, on the kind's own model.
func (r *jobResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, r.newModel())
}

func (r *jobResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	r.read(ctx, req, resp, r.newModel())
}

func (r *jobResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, r.newModel(), r.newModel())
}

func (r *jobResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.delete(ctx, req, resp, r.newModel())
}

// ModifyPlan warns when the job cannot be placed on the cluster's nodes (checkPlacement), and
// keeps in the plan of an update the status it leaves alone (planStatus). A kind with checks of
// its own (a TrainJob's, on its runtime) has a ModifyPlan of its own.
func (r *jobResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.checkPlacement(ctx, req, resp, r.newModel())
	planStatus(ctx, req, resp, r.newModel(), r.newModel())
}

// target is the resource's job object, with its pods.
func (r *jobResource) target(f *jobFields) kube.Target {
	return jobTarget(r.kind, f.Namespace.ValueString(), f.Name.ValueString())
}

// jobTarget is the job object of that kind, namespace and name, with its pods.
func jobTarget(kind *jobs.Kind, namespace, name string) kube.Target {
	return kube.Target{GVR: kind.GVR, Kind: kind.Object, Namespace: namespace, Name: name, PodSelector: kind.PodSelector(name),
		BackgroundDeletion: true, Owns: kind.Owns}
}

// dependentTarget is the job's dependent d, with the job's pods.
func dependentTarget(job kube.Target, d jobs.Dependent) kube.Target {
	// Nothing of what a Service or NetworkPolicy owns is named after it (EndpointSlices have
	// generated names): it is deleted in the background.
	return kube.Target{GVR: d.GVR, Kind: d.Kind, Namespace: job.Namespace, Name: d.Name, PodSelector: job.PodSelector, BackgroundDeletion: true}
}

// targetsOf are the targets of the dependents a spec built.
func (r *jobResource) targetsOf(job kube.Target, objs []*unstructured.Unstructured) ([]kube.Target, []jobs.Dependent, error) {
	targets := make([]kube.Target, len(objs))
	deps := make([]jobs.Dependent, len(objs))
	for i, obj := range objs {
		d, err := r.kind.DependentOf(obj)
		if err != nil {
			return nil, nil, err
		}
		targets[i], deps[i] = dependentTarget(job, d), d
	}
	return targets, deps, nil
}

// build is the model's spec and the objects it builds: the job and its dependents; ok is false,
// with the reason in diags, when the model does not make a valid job.
func (r *jobResource) build(ctx context.Context, m jobModel, diags *diag.Diagnostics) (spec jobs.Spec, job *unstructured.Unstructured,
	dependents []*unstructured.Unstructured, ok bool) {
	spec, d := m.spec(ctx)
	diags.Append(d...)
	if d.HasError() {
		return nil, nil, nil, false
	}
	job, dependents, err := spec.Build()
	if err != nil {
		diags.AddError("Invalid "+r.kind.Object, err.Error())
		return nil, nil, nil, false
	}
	return spec, job, dependents, true
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
	if rs, ok := m.(resolver); ok && !rs.resolve(ctx, r.client, &resp.Diagnostics) {
		return
	}
	spec, obj, dependents, ok := r.build(ctx, m, &resp.Diagnostics)
	if !ok {
		return
	}
	f := m.job()
	timeout, diags := f.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	t := r.target(f)
	importID := t.Namespace + "/" + t.Name
	if queue := jobs.QueueName(obj); queue != "" && !r.queueExists(ctx, t.Namespace, queue, &resp.Diagnostics) {
		return
	}
	services, made, err := r.targetsOf(t, dependents)
	if err != nil {
		resp.Diagnostics.AddError("Invalid "+r.kind.Object, err.Error())
		return
	}
	young := youngerThan(timeout)
	for i, d := range dependents {
		if _, err := r.client.Create(ctx, services[i], d, young); err != nil {
			resp.Diagnostics.AddError("Error creating "+services[i].String(), alreadyExistsDetail(services[i], importID, err))
			r.removeUnowned(ctx, services[:i], &resp.Diagnostics)
			return
		}
	}
	created, err := r.client.Create(ctx, t, obj, r.notStartedAndYoungerThan(timeout))
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
	r.setIdentity(ctx, resp.Identity, m.job(), &resp.Diagnostics)

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
	if d, ok := m.(withDependents); ok {
		*d.dependents() = dependentsValue(made)
	}
	r.createTensorBoard(ctx, &f.tensorBoardFields, created, spec.Pods(), &resp.Diagnostics)
	r.settle(ctx, m, spec, actionCreate, f.WaitFor.ValueString(), created, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
	r.setIdentity(ctx, resp.Identity, m.job(), &resp.Diagnostics)
}

// queueExists checks, before anything is created, that the job's LocalQueue exists: Kueue would
// hold a job submitted to no queue forever. The error names the queues the namespace has.
func (r *jobResource) queueExists(ctx context.Context, namespace, queue string, diags *diag.Diagnostics) bool {
	q := kube.Target{GVR: kueue.LocalQueueGVR, Kind: "LocalQueue", Namespace: namespace, Name: queue}
	obj, err := r.client.Get(ctx, q)
	if err != nil {
		diags.AddAttributeError(path.Root("queue_name"), "Error reading "+q.String(), err.Error())
		return false
	}
	if obj != nil {
		return true
	}
	names, err := r.client.Names(ctx, kueue.LocalQueueGVR, namespace)
	switch {
	case err != nil:
		diags.AddAttributeError(path.Root("queue_name"), "No LocalQueue "+queue,
			fmt.Sprintf("queue_name names LocalQueue %q, which cannot be found in namespace %s, and the LocalQueues there cannot be listed "+
				"(is Kueue installed?): %v. Nothing was created.", queue, namespace, err))
	case len(names) == 0:
		diags.AddAttributeError(path.Root("queue_name"), "No LocalQueue "+queue,
			fmt.Sprintf("queue_name names LocalQueue %q, but namespace %s has no LocalQueue at all: Kueue would hold the job forever. "+
				"Make one there (training_local_queue). Nothing was created.", queue, namespace))
	default:
		diags.AddAttributeError(path.Root("queue_name"), "No LocalQueue "+queue,
			fmt.Sprintf("queue_name names LocalQueue %q, which namespace %s does not have, so Kueue would hold the job forever. "+
				"The LocalQueues there: %s. Nothing was created.", queue, namespace, strings.Join(names, ", ")))
	}
	return false
}

// youngerThan allows the adoption of an object made from the same configuration by an earlier
// apply only if that apply could still have been creating it: it is younger than the create
// timeout. An older one is another workspace's, or a job whose state was removed.
func youngerThan(limit time.Duration) func(*unstructured.Unstructured) error {
	return func(existing *unstructured.Unstructured) error {
		if age := time.Since(existing.GetCreationTimestamp().Time); age > limit {
			return fmt.Errorf("it was made %s ago, longer ago than the create timeout (%s)", age.Round(time.Second), limit)
		}
		return nil
	}
}

// notStartedAndYoungerThan allows the adoption of a job only if, besides being young enough,
// it has not started or finished: training that ran is never silently attached to a new
// resource.
func (r *jobResource) notStartedAndYoungerThan(limit time.Duration) func(*unstructured.Unstructured) error {
	young := youngerThan(limit)
	return func(existing *unstructured.Unstructured) error {
		if err := young(existing); err != nil {
			return err
		}
		status, err := r.kind.Status(jobs.Observed{Object: existing}, time.Now())
		if err != nil {
			return err
		}
		if status.Phase != jobs.Pending && status.Phase != jobs.Suspended && status.Phase != jobs.Queued {
			return fmt.Errorf("it has started (%s)", status.Phase)
		}
		return nil
	}
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
// A suspended job is not waited for: it does not run until it is resumed.
func (r *jobResource) settle(ctx context.Context, m jobModel, spec jobs.Spec, action, waitFor string, written *unstructured.Unstructured, diags *diag.Diagnostics) {
	f := m.job()
	expect := spec.Expect()
	if s, ok := m.(suspendable); ok && s.suspended() {
		waitFor = waitCreated
	}
	observed, ok := r.waitOrObserve(ctx, r.target(f), waitFor, action, written,
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
	if waitFor == waitCreated && written != nil {
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
	if waitFor == waitAdmitted {
		var err error
		observed, err = r.client.Until(ctx, t, written, func(o jobs.Observed) (bool, error) {
			if reason := r.kind.Failure(o); reason != "" {
				return false, fmt.Errorf("%s", reason)
			}
			return o.Object != nil && jobs.Admitted(o), nil
		})
		switch {
		case timedOut(err):
			diags.AddWarning(fmt.Sprintf("%s is not admitted yet (%s)", t, action), notAdmittedYet(err, observed))
		case err != nil:
			diags.AddError(fmt.Sprintf("Error waiting for %s to be admitted (%s)", t, action), err.Error())
		}
	}
	if waitFor == waitRunning {
		var err error
		observed, err = r.client.Until(ctx, t, written, running)
		switch {
		case timedOut(err):
			// Not failed, only not running yet (queued, unschedulable, pulling): the job stays
			// in state as it is, untainted, and the warning says why.
			diags.AddWarning(fmt.Sprintf("%s is not running yet (%s)", t, action), notRunningYet(err, observed))
		case err != nil:
			diags.AddError(fmt.Sprintf("Error waiting for %s to run (%s)", t, action), err.Error())
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
// every attribute from the cluster, its dependents and TensorBoard included, so that a plan
// shows whatever was changed behind Terraform's back. The model's read keeps the state's words
// where the cluster says the same thing in others (see setFromPodOptions).
func (r *jobResource) read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, m jobModel) {
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
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
	observed := r.observeForRead(ctx, t, f, resp)
	if observed == nil {
		return
	}
	imported := m.pod().imported()
	resp.Diagnostics.Append(m.read(ctx, jobs.WithoutAdmission(observed.Object, observed.Workload))...)
	if resp.Diagnostics.HasError() {
		return
	}
	if imported {
		warnUnexpressed(ctx, r.kind, m, observed.Object, &resp.Diagnostics)
	}
	if d, ok := m.(withDependents); ok {
		*d.dependents() = r.existingDependents(ctx, f, &resp.Diagnostics)
	}
	r.readTensorBoard(ctx, &f.tensorBoardFields, t, m, imported, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
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

// existingDependents are the job's dependents that exist and are the job's (owned by it or made
// by this provider), as the dependents attribute lists them.
func (r *jobResource) existingDependents(ctx context.Context, f *jobFields, diags *diag.Diagnostics) types.List {
	job := r.target(f)
	var found []jobs.Dependent
	for _, d := range r.kind.Dependents(job.Name) {
		t := dependentTarget(job, d)
		obj, err := r.client.Read(ctx, t)
		if err != nil {
			diags.AddError("Error reading "+t.String(), err.Error())
			continue
		}
		if obj != nil && obj.GetDeletionTimestamp() == nil && r.theJobs(job, d)(obj) {
			found = append(found, d)
		}
	}
	return dependentsValue(found)
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

// keptWhenGone says whether a job that is gone from the cluster stays in state. A job that
// existed (the state holds its UID) may have trained for days after the state last saw it: a
// job recorded at its creation or admission (wait_for) was saved PENDING and has run since
// unseen. Its TTL, its operator's retention or a person removed it, and running it again is a
// choice, not a side effect of the next apply: it stays, with a warning, unless
// recreate_if_missing says to drop it (then the next plan creates it). Only a job that cannot
// have run is dropped, as any resource deleted outside Terraform is: one last seen held back
// (QUEUED by Kueue, or SUSPENDED) that had never started. A state without a UID (written before
// it was recorded) has only its last status to go by.
func keptWhenGone(t kube.Target, f *jobFields, diags *diag.Diagnostics) bool {
	status := f.Status.ValueString()
	neverStarted := f.StartTime.ValueString() == ""
	heldBack := neverStarted && (status == jobs.Queued || status == jobs.Suspended)
	existed := f.UID.ValueString() != ""
	started := !heldBack && (existed || !neverStarted || (status != "" && status != jobs.Pending))
	switch {
	case !started:
		return false
	case f.RecreateIfMissing.ValueBool():
		diags.AddWarning(t.Kind+" is gone from the cluster",
			fmt.Sprintf("%s may have run (last seen %s) and was then deleted outside Terraform. recreate_if_missing is true, so the next "+
				"apply creates it again and the training runs again.", t, status))
		return false
	}
	diags.AddWarning(t.Kind+" is gone from the cluster",
		fmt.Sprintf("%s existed (last seen %s; it may have run since) and was then deleted, by its TTL, its operator's retention or a person. It stays in "+
			"state so that Terraform does not run the training again by itself. To run it again: terraform apply -replace=<address>, "+
			"or set recreate_if_missing = true. To forget it: terraform state rm <address>.", t, status))
	return true
}

// update is Update for every job resource. Only what can change on a running job reaches it
// (everything else plans a replacement): the worker count, rescaled within the update timeout
// by the kind's guarded patch; labels, annotations and the live run-policy fields, patched on
// the job object (only what differs between the objects the state and the plan build, so
// fields others set stay) and the labels and annotations on its running pods too; dependents
// that were deleted, made again; and the TensorBoard, added, changed or removed. Then it waits
// as wait_for says, when the job was rescaled or resumed, and records the job.
func (r *jobResource) update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, plan, state jobModel) {
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, s := plan.job(), state.job()
	p.ID, p.UID = s.ID, s.UID
	from, to := int32(state.workers().ValueInt64()), int32(plan.workers().ValueInt64())
	spec, after, dependents, ok := r.build(ctx, plan, &resp.Diagnostics)
	// The state's job at the new count: what differs from the plan's is what changes in place.
	*state.workers() = *plan.workers()
	prior, before, _, priorOK := r.build(ctx, state, &resp.Diagnostics)
	if !ok || !priorOK {
		return
	}
	limit, diags := p.Timeouts.Update(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := r.target(p)
	jobPatch, err := mergePatch(before, after)
	if err != nil {
		resp.Diagnostics.AddError("Error updating "+t.String(), err.Error())
		return
	}
	podPatch := podMetadataPatch(prior.Pods(), spec.Pods())
	if from == to && jobPatch == nil && podPatch == nil && sameCompanions(plan, state) {
		// Only what Terraform alone holds changed (wait_for, timeouts, recreate_if_missing): the
		// cluster is not touched, and the job may even be gone (kept in state, see keptWhenGone).
		p.statusModel, p.TensorBoardURL = s.statusModel, s.TensorBoardURL
		if d, ok := plan.(withDependents); ok {
			if sd, ok := state.(withDependents); ok {
				*d.dependents() = *sd.dependents()
			}
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
		r.setIdentity(ctx, resp.Identity, plan.job(), &resp.Diagnostics)
		return
	}
	written, ok := r.rescale(ctx, t, from, to, &resp.Diagnostics)
	if !ok {
		return
	}
	if jobPatch != nil {
		if written, err = r.client.Patch(ctx, t, k8stypes.MergePatchType, jobPatch); err != nil {
			resp.Diagnostics.AddError("Error updating "+t.String(), goneOr(t, err))
			return
		}
	}
	if podPatch != nil {
		if err := r.client.PatchPods(ctx, t, podPatch); err != nil {
			resp.Diagnostics.AddError("Error updating the pods of "+t.String(), err.Error())
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
	r.updateTensorBoard(ctx, &s.tensorBoardFields, &p.tensorBoardFields, job, prior.Pods(), spec.Pods(), &resp.Diagnostics)
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
	if from == to && !resumed {
		waitFor = waitCreated // nothing that runs changed: record the job as it is
	}
	planned := p.statusModel
	r.settle(ctx, plan, spec, actionRescale, waitFor, written, &resp.Diagnostics)
	// What the plan kept of the status (planStatus: what this update leaves alone) the apply
	// gives as planned; the next refresh reads it anew.
	p.statusModel = planned.over(p.statusModel)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	r.setIdentity(ctx, resp.Identity, plan.job(), &resp.Diagnostics)
}

// sameCompanions says whether the plan keeps the job's TensorBoard and dependents as the state
// has them.
func sameCompanions(plan, state jobModel) bool {
	if !reflect.DeepEqual(plan.job().TensorBoard, state.job().TensorBoard) {
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
// (both built by this provider, from the state and from the plan; see mergePatch). It returns
// nil when nothing differs.
func (r *jobResource) patchDifference(ctx context.Context, t kube.Target, before, after *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	patch, err := mergePatch(before, after)
	if err != nil || patch == nil {
		return nil, err
	}
	return r.client.Patch(ctx, t, k8stypes.MergePatchType, patch)
}

// mergePatch is the JSON merge patch from before to after, nil when they are the same: only
// what differs is sent, so what others set on the object stays.
func mergePatch(before, after *unstructured.Unstructured) ([]byte, error) {
	b, err := json.Marshal(before.Object)
	if err != nil {
		return nil, err
	}
	a, err := json.Marshal(after.Object)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.CreateMergePatch(b, a)
	if err != nil || string(patch) == "{}" {
		return nil, err
	}
	return patch, nil
}

// podMetadataPatch is the merge patch that changes running pods' labels and annotations from
// the state's to the plan's (a pod's metadata may change; its spec may not), nil if none
// changed.
func podMetadataPatch(before, after jobs.PodOptions) []byte {
	diff := func(b, a map[string]string) map[string]any {
		out := map[string]any{}
		for k := range b {
			if _, kept := a[k]; !kept {
				out[k] = nil
			}
		}
		for k, v := range a {
			if old, had := b[k]; !had || old != v {
				out[k] = v
			}
		}
		return out
	}
	labels, annotations := diff(before.Labels, after.Labels), diff(before.Annotations, after.Annotations)
	if len(labels) == 0 && len(annotations) == 0 {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "annotations": annotations}})
	return patch
}

// reconcileDependents makes the job's dependents those the plan built: one deleted behind
// Terraform's back (an elastic job's rendezvous Service) is made again, owned by the job (the
// running workers find it again by name), and one no longer asked for (the etcd's
// NetworkPolicy turned off) is deleted if it is the job's. It returns the dependents made.
func (r *jobResource) reconcileDependents(ctx context.Context, f *jobFields, job *unstructured.Unstructured, dependents []*unstructured.Unstructured,
	diags *diag.Diagnostics) types.List {
	jt := r.target(f)
	targets, wanted, err := r.targetsOf(jt, dependents)
	if err != nil {
		diags.AddError("Invalid "+r.kind.Object, err.Error())
		return types.ListNull(types.StringType)
	}
	for i, t := range targets {
		existing, err := r.client.Get(ctx, t)
		if err != nil {
			diags.AddError("Error reading "+t.String(), err.Error())
			continue
		}
		if existing != nil {
			continue
		}
		d := dependents[i]
		d.SetOwnerReferences([]metav1.OwnerReference{ownerReference(job)})
		if _, err := r.client.Create(ctx, t, d, youngerThan(defaultTimeout)); err != nil {
			diags.AddError("Error creating "+t.String(), alreadyExistsDetail(t, f.ID.ValueString(), err))
		}
	}
	for _, d := range r.kind.Dependents(jt.Name) {
		if slices.Contains(wanted, d) {
			continue
		}
		t := dependentTarget(jt, d)
		if _, err := r.client.DeleteIf(ctx, t, r.theJobs(jt, d)); err != nil {
			diags.AddError("Error deleting "+t.String(), err.Error())
		}
	}
	return dependentsValue(wanted)
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
	detail := goneOr(t, err)
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
// the delete timeout until they, their pods and what the operator made for the job are gone.
// Its dependents (an elastic job's Services) are deleted by name too, as an imported job's may
// have no owner reference; but only those that are the job's, owned by it or made by this
// provider: one of that name that is somebody else's is left alone, with a warning.
func (r *jobResource) delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse, m jobModel) {
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := m.job()
	deleteDefault := defaultTimeout
	if g, ok := m.(withGracePeriod); ok {
		deleteDefault += g.gracePeriod()
	}
	limit, diags := f.Timeouts.Delete(ctx, deleteDefault)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := r.target(f)
	t.UID = k8stypes.UID(f.UID.ValueString())
	if err := r.client.Delete(ctx, t, t.UID); err != nil {
		resp.Diagnostics.AddError("Error deleting "+t.String(), err.Error())
		return
	}
	targets := f.deletionTargets(t)
	for _, d := range r.kind.Dependents(t.Name) {
		dependent := dependentTarget(t, d)
		left, err := r.client.DeleteIf(ctx, dependent, r.theJobs(t, d))
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

// theJobs says whether an object under the name of the job's dependent d is the job's: owned by
// it, made by this provider (an imported job's dependents may have no owner reference), or made
// by hand for this job alone (a Service selecting exactly its pods of the role, see
// jobs.Kind.MadeFor).
func (r *jobResource) theJobs(job kube.Target, d jobs.Dependent) func(*unstructured.Unstructured) bool {
	return func(obj *unstructured.Unstructured) bool {
		return ownedBy(obj, job) || jobs.IsManaged(obj) || r.kind.MadeFor(job.Name, d, obj)
	}
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

// waitDeleted waits until each target object and the pods its selector matches are gone; pods
// that a node which is not Ready holds are left to it, with a warning naming them.
func (r *jobResource) waitDeleted(ctx context.Context, diags *diag.Diagnostics, targets ...kube.Target) {
	for _, t := range targets {
		observed, stuck, err := r.client.UntilGone(ctx, t)
		if err == nil {
			if len(stuck) > 0 {
				var names []string
				for _, p := range stuck {
					names = append(names, fmt.Sprintf("pod %s on node %s", p.Name, p.Spec.NodeName))
				}
				diags.AddWarning("Pods left on nodes that are not Ready",
					fmt.Sprintf("%s was deleted, but %s cannot go until their node answers again: no kubelet there confirms the deletion. "+
						"They are left to the node's lifecycle (Kubernetes removes them when the node returns, is deleted, or is tainted "+
						"node.kubernetes.io/out-of-service). To remove them now: kubectl delete pod --force.",
						t, strings.Join(names, ", ")))
			}
			continue
		}
		var left []string
		if observed.Object != nil {
			left = append(left, t.String())
		}
		left = append(left, observed.Owned...)
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
}

// setImported sets what an import knows of a job before its first read: its identity, and the
// defaults of what Terraform alone holds (wait_for, recreate_if_missing). A list resource's
// results start the same way.
func setImported(ctx context.Context, state *tfsdk.State, namespace, name string, diags *diag.Diagnostics) {
	for attr, v := range map[string]any{"id": namespace + "/" + name, "namespace": namespace, "name": name,
		"wait_for": waitRunning, "recreate_if_missing": false} {
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
	case existing != nil && exists.NotAdopted != nil:
		return fmt.Sprintf("%s already exists: this provider created it from the same configuration, but not in this apply, and %v. "+
			"It was not taken over (it may be another workspace's, or a job whose state was removed) and was not changed. "+
			"Take it over with: terraform import <address> %s (or delete it)", t, exists.NotAdopted, importID)
	case existing != nil && jobs.IsManaged(existing):
		return fmt.Sprintf("%s already exists: this provider created it, but from a different configuration (perhaps an apply that was "+
			"interrupted, or another workspace). It was not changed. Take it over with: terraform import <address> %s (or delete it)", t, importID)
	}
	return fmt.Sprintf("%s already exists and was not created by this provider, so it was not changed. Choose another name, "+
		"or take the job over with: terraform import <address> %s", t, importID)
}
