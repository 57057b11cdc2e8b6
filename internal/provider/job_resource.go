package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	// admissionPrediction: plans of queued jobs say what Kueue would do (see predictAdmission).
	admissionPrediction bool
	// declared: the Kueue objects the plan declares before the job (kueue.Declared).
	declared *kueue.Declared
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
	// ProtectRunning: a plan that replaces or destroys the job while it runs fails (guardRunning).
	ProtectRunning types.Bool `tfsdk:"protect_running"`
	// FailFast and MinRunningSeconds say when a wait for the job to run fails, and when it runs.
	FailFast          types.String `tfsdk:"fail_fast"`
	MinRunningSeconds types.Int64  `tfsdk:"min_running_seconds"`
	statusModel
}

func (f *jobFields) job() *jobFields { return f }

// workersField is the worker count of the kinds that say `worker_count` (a TrainJob says
// `num_nodes`, as Trainer does).
type workersField struct {
	WorkerCount types.Int64 `tfsdk:"worker_count"`
}

func (w *workersField) workers() *types.Int64 { return &w.WorkerCount }

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
	// suspendKnown sets an unset suspend (unknown in the plan of a create) to what the job was
	// made with: false.
	suspendKnown()
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
		r.client, r.placementCheck, r.admissionPrediction, r.declared = d.client, d.placementCheck, d.admissionPrediction, d.declared
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

// ResourceNoOpOnUnchangedPlan says that ModifyPlan returns at once on an unchanged plan
// (internal/shortcuts answers such plans without calling it).
func (*jobResource) ResourceNoOpOnUnchangedPlan() {}

// ModifyPlan decides what the plan does to the job (plan: which changed attributes replace it,
// by its kind's comparison, and whether it is rescaled in place), checks the job's roles and patches, its namespace's Pod Security and the nodes (checkPlanned), warns when
// its replacement would drop what the live job holds beyond its resource (warnDropped), says
// what a replacement does to a running training (warnReplacedTraining), and
// keeps in the plan of an update the status it leaves alone (planStatus). A kind with checks of
// its own (a TrainJob's, on its runtime) has a ModifyPlan of its own.
func (r *jobResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	// The server answers an unchanged plan without calling this (ResourceNoOpOnUnchangedPlan):
	// what must run on every plan does not go below.
	if unchanged(req) {
		return
	}
	p := r.plan(ctx, req, resp)
	guardRunning(ctx, req, resp, p)
	warnDestroyedTraining(ctx, req, resp, p)
	r.checkPlanned(ctx, req, resp, p)
	r.warnDropped(ctx, resp, p)
	warnReplacedTraining(ctx, resp, p)
	warnNewWriteOnlyVersion(resp, p)
	planStatus(ctx, resp, p)
}

// unchanged says whether the plan leaves the job as the state has it (Terraform's proposal is
// the state): then a job's ModifyPlan has nothing to check, replace or keep. Most of a plan of
// many jobs is these, and each of its steps costs a walk of the whole object.
func unchanged(req resource.ModifyPlanRequest) bool { return req.Plan.Raw.Equal(req.State.Raw) }

// target is the resource's job object, with its pods.
func (r *jobResource) target(f *jobFields) kube.Target {
	return jobTarget(r.kind, f.Namespace.ValueString(), f.Name.ValueString())
}

// jobTarget is the job object of that kind, namespace and name, with its pods.
func jobTarget(kind *jobs.Kind, namespace, name string) kube.Target {
	return kube.Target{GVR: kind.GVR, Kind: kind.Object, Namespace: namespace, Name: name, PodSelector: kind.PodSelector(name),
		BackgroundDeletion: true, Owns: kind.Owns}
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
