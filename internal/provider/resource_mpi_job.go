package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
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
	_ resource.ResourceWithConfigure      = (*mpiJobResource)(nil)
	_ resource.ResourceWithImportState    = (*mpiJobResource)(nil)
	_ resource.ResourceWithValidateConfig = (*mpiJobResource)(nil)
)

func newMPIJobResource() resource.Resource { return &mpiJobResource{} }

type mpiJobResource struct {
	jobResource
}

// boundsModel is the elastic block: the fewest and most workers.
type boundsModel struct {
	MinWorkers types.Int64 `tfsdk:"min_workers"`
	MaxWorkers types.Int64 `tfsdk:"max_workers"`
}

type mpiJobModel struct {
	Name types.String `tfsdk:"name"`
	runPolicyModel
	podModel
	Command         types.List     `tfsdk:"command"`
	WorkerCommand   types.List     `tfsdk:"worker_command"`
	WorkerCount     types.Int64    `tfsdk:"worker_count"`
	SlotsPerWorker  types.Int64    `tfsdk:"slots_per_worker"`
	LauncherCPU     types.String   `tfsdk:"launcher_cpu"`
	LauncherMemory  types.String   `tfsdk:"launcher_memory"`
	Elastic         []boundsModel  `tfsdk:"elastic"`
	MountOnLauncher types.Bool     `tfsdk:"mount_data_on_launcher"`
	Timeouts        timeouts.Value `tfsdk:"timeouts"`
	tensorBoardFields
	statusModel
}

func (r *mpiJobResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_mpi_job"
}

func (r *mpiJobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, PlanModifiers: replaceString,
			Validators:          []validator.String{jobNameRule("-launcher-xxxxx")},
			MarkdownDescription: "Name of the MPIJob (Arena: `--name`): a DNS label short enough for its pods' names."},
		"command": schema.ListAttribute{ElementType: types.StringType, Required: true,
			PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
			Validators:    []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "The launcher's command in exec form, usually starting with `mpirun` (Arena: the command after the flags). " +
				"With an `elastic` block it is the training program alone (`[\"python\", \"train.py\"]`), which the launcher runs under " +
				"`horovodrun -np N --min-np MIN --max-np MAX --slots-per-host SLOTS --host-discovery-script " + jobs.DiscoverHostsScript + "`, " +
				"counting one process per slot of each worker."},
		"worker_command": schema.ListAttribute{ElementType: types.StringType, Optional: true, Computed: true,
			Default:             listdefault.StaticValue(stringListValue(jobs.DefaultWorkerCommand)),
			PlanModifiers:       []planmodifier.List{listplanmodifier.RequiresReplace()},
			Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "The workers' command. Default: the SSH daemon (`/usr/sbin/sshd -De`) that mpi-operator v2's launcher reaches them through."},
		"worker_count": schema.Int64Attribute{Required: true,
			Validators: []validator.Int64{int64validator.Between(1, 10000)},
			PlanModifiers: []planmodifier.Int64{workerCountPlan{inPlace: inPlaceWithBlock("elastic"),
				description: "in place with an elastic block, otherwise by replacing the job"}},
			MarkdownDescription: "Number of workers (Arena: `--workers`). A plain `mpirun` fixes its ranks when it starts and never " +
				"reads the hostfile again, so changing it **replaces** the job. With an `elastic` block, elastic Horovod finds its hosts " +
				"through mpi-operator's discovery script while it runs, and changing it rescales the running job in place within the " +
				"block's bounds. With `wait_for = \"running\"` the apply waits until exactly that many workers run."},
		"mount_data_on_launcher": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			MarkdownDescription: "Mount `data_volumes` on the launcher as well as on the workers (Arena: `--mounts-on-launcher`). " +
				"Default false: the launcher usually only starts the workers, and a `ReadWriteOnce` claim mounted by a launcher on " +
				"another node would keep workers from starting (Multi-Attach)."},
		"slots_per_worker": schema.Int64Attribute{Optional: true, Computed: true,
			PlanModifiers:       []planmodifier.Int64{perGPUDefault{}, int64planmodifier.RequiresReplace()},
			Validators:          []validator.Int64{int64validator.Between(1, 1024)},
			MarkdownDescription: "MPI slots (processes) per worker. Default: the GPUs per worker, at least 1."},
		"launcher_cpu": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "CPU of the launcher as a Kubernetes quantity."},
		"launcher_memory": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Memory of the launcher as a Kubernetes quantity."},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An MPI (Horovod) training job run by mpi-operator: a Kubeflow `MPIJob` (`kubeflow.org/v2beta1`) " +
			"with one launcher and `worker_count` workers. It does what `arena submit mpi` does. Changing `worker_count` replaces " +
			"a plain `mpirun` job and rescales an `elastic` (elastic Horovod) one in place; changing anything baked into its pods replaces it. Destroy deletes the MPIJob with foreground " +
			"propagation and waits until it and all its pods are gone.",
		Attributes: mergeAttributes(own, map[string]schema.Attribute{"tensorboard_url": tensorBoardURLAttribute()}, runPolicyAttributes("the launcher"), podAttributes("the launcher and workers"), statusAttributes()),
		Blocks: map[string]schema.Block{
			"toleration":  podBlocks("the launcher and workers")["toleration"],
			"timeouts":    timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
			"tensorboard": tensorBoardBlock(),
			"elastic": schema.ListNestedBlock{
				MarkdownDescription: "Run elastic Horovod, so that `worker_count` changes in place: `command` runs under `horovodrun` " +
					"with mpi-operator's host discovery script, which lists the Running workers as they come and go. The training " +
					"program must use Horovod's elastic API (`hvd.elastic.run`). Adding or removing the block replaces the job.",
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
				Validators:    []validator.List{listvalidator.SizeAtMost(1)},
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"min_workers": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 10000)},
						MarkdownDescription: "Fewest workers the training goes on with (`--min-np` is this times the slots per worker)."},
					"max_workers": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 10000)},
						MarkdownDescription: "Most workers the job may be scaled to (`--max-np` is this times the slots per worker)."},
				}},
			},
		},
	}
}

// ValidateConfig checks an elastic job's bounds at plan time: min_workers <= worker_count <= max_workers.
func (r *mpiJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var workers types.Int64
	var elastic []boundsModel
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("worker_count"), &workers)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("elastic"), &elastic)...)
	if resp.Diagnostics.HasError() || len(elastic) == 0 {
		return
	}
	validateBounds(workers, elastic[0].MinWorkers, elastic[0].MaxWorkers, path.Root("elastic").AtListIndex(0), &resp.Diagnostics)
}

func (m mpiJobModel) target() kube.Target {
	return kube.Target{
		GVR:         jobs.MPIJobGVR,
		Kind:        "MPIJob",
		Namespace:   m.Namespace.ValueString(),
		Name:        m.Name.ValueString(),
		PodSelector: jobs.KubeflowPodSelector(m.Name.ValueString()),
	}
}

func (m mpiJobModel) spec(ctx context.Context) (jobs.MPIJobSpec, diag.Diagnostics) {
	pod, diags := m.podOptions(ctx)
	spec := jobs.MPIJobSpec{
		Name:                m.Name.ValueString(),
		Namespace:           m.Namespace.ValueString(),
		Pod:                 pod,
		LauncherCommand:     stringList(ctx, m.Command, &diags),
		WorkerCommand:       stringList(ctx, m.WorkerCommand, &diags),
		Workers:             int32(m.WorkerCount.ValueInt64()),
		SlotsPerWorker:      int32(m.SlotsPerWorker.ValueInt64()),
		LauncherCPU:         m.LauncherCPU.ValueString(),
		LauncherMemory:      m.LauncherMemory.ValueString(),
		MountDataOnLauncher: m.MountOnLauncher.ValueBool(),
	}
	if len(m.Elastic) > 0 {
		spec.Elastic = &jobs.MPIElastic{MinWorkers: int32(m.Elastic[0].MinWorkers.ValueInt64()), MaxWorkers: int32(m.Elastic[0].MaxWorkers.ValueInt64())}
	}
	spec.CleanPodPolicy, spec.TTLSecondsAfterFinished, spec.BackoffLimit, spec.ActiveDeadlineSeconds, spec.QueueName = m.runPolicy()
	return spec, diags
}

// setFromSpec fills every configurable attribute from the cluster's object (import).
func (m *mpiJobModel) setFromSpec(ctx context.Context, s jobs.MPIJobSpec) diag.Diagnostics {
	diags := m.setFromPodOptions(ctx, s.Pod)
	m.Command = stringListValue(s.LauncherCommand)
	m.WorkerCommand = stringListValue(s.WorkerCommand)
	m.WorkerCount = types.Int64Value(int64(s.Workers))
	m.SlotsPerWorker = types.Int64Value(int64(s.SlotsPerWorker))
	m.LauncherCPU = optionalString(s.LauncherCPU)
	m.LauncherMemory = optionalString(s.LauncherMemory)
	m.MountOnLauncher = types.BoolValue(s.MountDataOnLauncher)
	m.Elastic = nil
	if e := s.Elastic; e != nil {
		m.Elastic = []boundsModel{{MinWorkers: types.Int64Value(int64(e.MinWorkers)), MaxWorkers: types.Int64Value(int64(e.MaxWorkers))}}
	}
	m.setRunPolicy(s.CleanPodPolicy, s.TTLSecondsAfterFinished, s.BackoffLimit, s.ActiveDeadlineSeconds, s.QueueName)
	return diags
}

func (r *mpiJobResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan mpiJobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, diags := plan.spec(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, err := jobs.NewMPIJob(spec)
	if err != nil {
		resp.Diagnostics.AddError("Invalid MPI job", err.Error())
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	t := plan.target()
	created, err := r.client.Create(ctx, t, obj)
	if err != nil {
		resp.Diagnostics.AddError("Error creating MPI job", alreadyExistsDetail(t, t.Namespace+"/"+t.Name, err))
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

// settle waits as wait_for says, then records the job's status.
func (r *mpiJobResource) settle(ctx context.Context, m *mpiJobModel, action string, written *unstructured.Unstructured, diags *diag.Diagnostics) {
	workers := int32(m.WorkerCount.ValueInt64())
	observed, ok := r.waitOrObserve(ctx, m.target(), m.WaitFor.ValueString(), action, written,
		func(o jobs.Observed) (bool, error) { return jobs.MPIJobRunning(o, workers) }, diags)
	if !ok {
		return
	}
	status, err := jobs.KubeflowStatus(observed, jobs.MPIJobRoleLabel, time.Now())
	if err != nil {
		diags.AddError("Error reading MPI job status", err.Error())
		return
	}
	diags.Append(m.set(status)...)
}

func (r *mpiJobResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state mpiJobModel
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
		spec, err := jobs.ReadMPIJob(observed.Object)
		if err != nil {
			resp.Diagnostics.AddError("Error importing MPI job", err.Error())
			return
		}
		resp.Diagnostics.Append(state.setFromSpec(ctx, spec)...)
	} else {
		workers, err := jobs.MPIWorkerReplicas(observed.Object)
		if err != nil {
			resp.Diagnostics.AddError("Error reading MPI job", fmt.Sprintf("%s: %v", t, err))
			return
		}
		state.WorkerCount = types.Int64Value(int64(workers))
	}
	state.ID = types.StringValue(t.Namespace + "/" + t.Name)
	status, err := jobs.KubeflowStatus(*observed, jobs.MPIJobRoleLabel, time.Now())
	if err != nil {
		resp.Diagnostics.AddError("Error reading MPI job status", err.Error())
		return
	}
	resp.Diagnostics.Append(state.set(status)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *mpiJobResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state mpiJobModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.UID = state.ID, state.UID
	r.update(ctx, plan.target(), state.WorkerCount, plan.WorkerCount, plan.Timeouts, jobs.MPIRescalePatch, jobs.MPIWorkerReplicas, &resp.Diagnostics,
		func(ctx context.Context, patched *unstructured.Unstructured) {
			r.settle(ctx, &plan, actionRescale, patched, &resp.Diagnostics)
			resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		})
}

func (r *mpiJobResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state mpiJobModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.deleteJob(ctx, state.target(), state.UID, state.Timeouts, state.tensorBoardFields, nil, &resp.Diagnostics)
}

func (r *mpiJobResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importNamespacedName(ctx, req, resp)
}

func stringListValue(l []string) types.List {
	values := make([]attr.Value, len(l))
	for i, s := range l {
		values[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, values)
}
