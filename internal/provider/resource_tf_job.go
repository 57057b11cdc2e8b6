package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*tfJobResource)(nil)
	_ resource.ResourceWithImportState    = (*tfJobResource)(nil)
	_ resource.ResourceWithValidateConfig = (*tfJobResource)(nil)
)

func newTFJobResource() resource.Resource { return &tfJobResource{} }

type tfJobResource struct {
	jobResource
}

type tfJobModel struct {
	Name types.String `tfsdk:"name"`
	runPolicyModel
	podModel
	Command     types.List     `tfsdk:"command"`
	WorkerCount types.Int64    `tfsdk:"worker_count"`
	PSCount     types.Int64    `tfsdk:"ps_count"`
	PSCPU       types.String   `tfsdk:"ps_cpu"`
	PSMemory    types.String   `tfsdk:"ps_memory"`
	Chief       types.Bool     `tfsdk:"chief"`
	Dynamic     types.Bool     `tfsdk:"dynamic_workers"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
	tensorBoardFields
	statusModel
}

func (r *tfJobResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tf_job"
}

func (r *tfJobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, PlanModifiers: replaceString,
			Validators:          []validator.String{jobNameRule("-worker-99999")},
			MarkdownDescription: "Name of the TFJob (Arena: `--name`): a DNS label short enough for its pods' names."},
		"command": schema.ListAttribute{ElementType: types.StringType, Required: true,
			PlanModifiers:       []planmodifier.List{listplanmodifier.RequiresReplace()},
			Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "The command of every replica, in exec form; training-operator sets `TF_CONFIG` for each."},
		"worker_count": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 10000)},
			PlanModifiers: []planmodifier.Int64{workerCountPlan{inPlace: inPlaceWhenTrue("dynamic_workers"),
				description: "in place with dynamic_workers, otherwise by replacing the job"}},
			MarkdownDescription: "Number of workers (Arena: `--workers`). TensorFlow's cluster is static: every task's `TF_CONFIG` lists " +
				"every worker, so changing it **replaces** the job, unless `dynamic_workers` is set, when it rescales the running job in place. " +
				"With `wait_for = \"running\"` the apply waits until exactly that many workers run."},
		"dynamic_workers": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			MarkdownDescription: "Let workers join and leave while the job runs (training-operator's `enableDynamicWorker`), so that " +
				"`worker_count` changes in place. Default false. training-operator then gives each task a sparse `TF_CONFIG`: a worker " +
				"lists only itself and the parameter servers, a parameter server only itself; and a failed worker no longer fails the job. " +
				"That suits an asynchronous parameter-server job (`ParameterServerStrategy`), so it needs `ps_count` of at least 1 and no " +
				"`chief`; a `MultiWorkerMirroredStrategy` job needs the full cluster and must leave it off."},
		"ps_count": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(0),
			PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			Validators:          []validator.Int64{int64validator.Between(0, 1000)},
			MarkdownDescription: "Number of parameter servers (Arena: `--ps`). Default 0. They get no GPUs."},
		"ps_cpu": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "CPU per parameter server (Arena: `--ps-cpu`)."},
		"ps_memory": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Memory per parameter server (Arena: `--ps-memory`)."},
		"chief": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			PlanModifiers:       []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			MarkdownDescription: "Run a chief as well (Arena: `--chief`), with the workers' resources. Default false."},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A distributed TensorFlow job run by training-operator: a Kubeflow `TFJob` (`kubeflow.org/v1`) with " +
			"`worker_count` workers, optional parameter servers and an optional chief, all running the same image and command. " +
			"It does what `arena submit tf` does, tolerations included. Changing `worker_count` replaces the job, or rescales it in place " +
			"with `dynamic_workers`; changing anything baked into its pods replaces it. Destroy deletes the TFJob with foreground propagation and waits until it and all its pods are gone.",
		Attributes: mergeAttributes(own, map[string]schema.Attribute{"tensorboard_url": tensorBoardURLAttribute()}, runPolicyAttributes("a failed replica"), podAttributes("every replica"), statusAttributes()),
		Blocks: map[string]schema.Block{
			"toleration":  podBlocks("every replica")["toleration"],
			"timeouts":    timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
			"tensorboard": tensorBoardBlock(),
		},
	}
}

// ValidateConfig refuses dynamic workers where training-operator's sparse TF_CONFIG would leave
// tasks without the cluster they need.
func (r *tfJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var dynamic, chief types.Bool
	var ps types.Int64
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("dynamic_workers"), &dynamic)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("chief"), &chief)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("ps_count"), &ps)...)
	if !dynamic.ValueBool() || chief.IsUnknown() || ps.IsUnknown() {
		return
	}
	if err := jobs.CheckDynamicWorkers(int32(ps.ValueInt64()), chief.ValueBool()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("dynamic_workers"), "Invalid dynamic workers", err.Error()+".")
	}
}

func (m tfJobModel) target() kube.Target {
	return kube.Target{GVR: jobs.TFJobGVR, Kind: "TFJob", Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(),
		PodSelector: jobs.KubeflowPodSelector(m.Name.ValueString())}
}

func (m tfJobModel) spec(ctx context.Context) (jobs.TFJobSpec, diag.Diagnostics) {
	pod, diags := m.podOptions(ctx)
	spec := jobs.TFJobSpec{
		Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString(), Pod: pod,
		Command:        stringList(ctx, m.Command, &diags),
		Workers:        int32(m.WorkerCount.ValueInt64()),
		PS:             int32(m.PSCount.ValueInt64()),
		PSCPU:          m.PSCPU.ValueString(),
		PSMemory:       m.PSMemory.ValueString(),
		Chief:          m.Chief.ValueBool(),
		DynamicWorkers: m.Dynamic.ValueBool(),
	}
	spec.CleanPodPolicy, spec.TTLSecondsAfterFinished, spec.BackoffLimit, spec.ActiveDeadlineSeconds, spec.QueueName = m.runPolicy()
	return spec, diags
}

func (m *tfJobModel) setFromSpec(ctx context.Context, s jobs.TFJobSpec) diag.Diagnostics {
	diags := m.setFromPodOptions(ctx, s.Pod)
	m.Command = stringListValue(s.Command)
	m.WorkerCount = types.Int64Value(int64(s.Workers))
	m.PSCount = types.Int64Value(int64(s.PS))
	m.PSCPU = optionalString(s.PSCPU)
	m.PSMemory = optionalString(s.PSMemory)
	m.Chief = types.BoolValue(s.Chief)
	m.Dynamic = types.BoolValue(s.DynamicWorkers)
	m.setRunPolicy(s.CleanPodPolicy, s.TTLSecondsAfterFinished, s.BackoffLimit, s.ActiveDeadlineSeconds, s.QueueName)
	return diags
}

func (r *tfJobResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan tfJobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, diags := plan.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, err := jobs.NewTFJob(spec)
	if err != nil {
		resp.Diagnostics.AddError("Invalid TF job", err.Error())
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	t := plan.target()
	created, err := r.client.Create(ctx, t, obj)
	if err != nil {
		resp.Diagnostics.AddError("Error creating TF job", alreadyExistsDetail(t, t.Namespace+"/"+t.Name, err))
		return
	}
	plan.ID = types.StringValue(t.Namespace + "/" + t.Name)
	plan.UID = types.StringValue(string(created.GetUID()))
	resp.Diagnostics.Append(plan.set(jobs.Status{Phase: jobs.Pending})...)
	plan.TensorBoardURL = types.StringNull()
	// Saved before waiting: if the wait fails, the job is in state (tainted), never orphaned.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	r.createTensorBoard(ctx, &plan.tensorBoardFields, created, spec.Pod, &resp.Diagnostics)
	r.settle(ctx, &plan, actionCreate, created, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *tfJobResource) settle(ctx context.Context, m *tfJobModel, action string, written *unstructured.Unstructured, diags *diag.Diagnostics) {
	workers, ps, chief := int32(m.WorkerCount.ValueInt64()), int32(m.PSCount.ValueInt64()), m.Chief.ValueBool()
	observed, ok := r.waitOrObserve(ctx, m.target(), m.WaitFor.ValueString(), action, written,
		func(o jobs.Observed) (bool, error) { return jobs.TFJobRunning(o, workers, ps, chief) }, diags)
	if !ok {
		return
	}
	status, err := jobs.KubeflowStatus(observed, jobs.ReplicaTypeLabel, time.Now())
	if err != nil {
		diags.AddError("Error reading TF job status", err.Error())
		return
	}
	diags.Append(m.set(status)...)
}

func (r *tfJobResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state tfJobModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t := state.target()
	observed := r.observeForRead(ctx, t, true, state.Status, &state.UID, resp)
	if observed == nil {
		return
	}
	if state.Image.IsNull() {
		// Just imported: everything comes from the cluster.
		spec, err := jobs.ReadTFJob(observed.Object)
		if err != nil {
			resp.Diagnostics.AddError("Error importing TF job", err.Error())
			return
		}
		resp.Diagnostics.Append(state.setFromSpec(ctx, spec)...)
	} else {
		workers, err := jobs.TFWorkers(observed.Object)
		if err != nil {
			resp.Diagnostics.AddError("Error reading TF job", err.Error())
			return
		}
		state.WorkerCount = types.Int64Value(int64(workers))
	}
	state.ID = types.StringValue(t.Namespace + "/" + t.Name)
	status, err := jobs.KubeflowStatus(*observed, jobs.ReplicaTypeLabel, time.Now())
	if err != nil {
		resp.Diagnostics.AddError("Error reading TF job status", err.Error())
		return
	}
	resp.Diagnostics.Append(state.set(status)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *tfJobResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state tfJobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.UID = state.ID, state.UID
	r.update(ctx, plan.target(), state.WorkerCount, plan.WorkerCount, plan.Timeouts, jobs.TFRescalePatch, jobs.TFWorkers, &resp.Diagnostics,
		func(ctx context.Context, patched *unstructured.Unstructured) {
			r.settle(ctx, &plan, actionRescale, patched, &resp.Diagnostics)
			resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		})
}

func (r *tfJobResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state tfJobModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.deleteJob(ctx, state.target(), state.UID, state.Timeouts, state.tensorBoardFields, nil, &resp.Diagnostics)
}

func (r *tfJobResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importNamespacedName(ctx, req, resp)
}
