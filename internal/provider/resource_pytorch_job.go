package provider

import (
	"cmp"
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

var (
	_ resource.ResourceWithConfigure      = (*pytorchJobResource)(nil)
	_ resource.ResourceWithImportState    = (*pytorchJobResource)(nil)
	_ resource.ResourceWithValidateConfig = (*pytorchJobResource)(nil)
)

func newPyTorchJobResource() resource.Resource {
	return &pytorchJobResource{jobResource{kind: jobs.PyTorch, newModel: func() jobModel { return &pytorchJobModel{} }}}
}

type pytorchJobResource struct {
	jobResource
}

type pytorchJobModel struct {
	jobFields
	tensorBoardFields
	workersField
	podModel
	podTemplateModel
	writeOnlyEnvModel
	rolesModel
	tasModel
	runPolicyModel
	Command            types.List           `tfsdk:"command"`
	ProcessesPerWorker types.Int64          `tfsdk:"processes_per_worker"`
	Elastic            *pytorchElasticModel `tfsdk:"elastic"`
}

type pytorchElasticModel struct {
	boundsModel
	RendezvousBackend  types.String `tfsdk:"rendezvous_backend"`
	RendezvousEndpoint types.String `tfsdk:"rendezvous_endpoint"`
	MaxRestarts        types.Int64  `tfsdk:"max_restarts"`
}

func (r *pytorchJobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	count := []validator.Int64{int64validator.Between(1, 10000)}
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, Validators: []validator.String{jobNameRule("-worker-99999")},
			MarkdownDescription: "Name of the PyTorchJob: a DNS label short enough for its pods' names."},
		"command": schema.ListAttribute{ElementType: types.StringType, Required: true,
			Validators: []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "The command of the master and every worker, in exec form, usually `[\"torchrun\", \"train.py\", ...]`: " +
				"training-operator sets `MASTER_ADDR`, `MASTER_PORT`, `WORLD_SIZE`, `RANK` and torchrun's `PET_*` variables " +
				"(`PET_NNODES`, `PET_NODE_RANK`, `PET_NPROC_PER_NODE`; with `elastic`, `PET_RDZV_BACKEND`, `PET_RDZV_ENDPOINT`), which torchrun reads as its arguments."},
		"worker_count": schema.Int64Attribute{Required: true, Validators: count,
			MarkdownDescription: "Number of workers, the master not counted. A static job's " +
				"processes are told `WORLD_SIZE` when they start, so changing it **replaces** the job. With `elastic`, torchrun " +
				"re-rendezvouses with the workers that come and go, and changing it rescales the running job in place within its bounds."},
		"processes_per_worker": schema.Int64Attribute{Optional: true, Computed: true,
			PlanModifiers:       []planmodifier.Int64{perGPUDefault{}},
			Validators:          []validator.Int64{int64validator.Between(1, 1024)},
			MarkdownDescription: "Training processes per pod (torchrun's `--nproc_per_node`, the PyTorchJob's `nprocPerNode`). Default: the GPUs per worker, at least 1."},
		"elastic": schema.SingleNestedAttribute{Optional: true,
			MarkdownDescription: "Make the job elastic (the PyTorchJob's `elasticPolicy`): workers only, no master, meeting at a " +
				"rendezvous (by default c10d on the first worker, `NAME-worker-0`), so that `worker_count` changes in place between " +
				"`min_workers` and `max_workers` (torchrun's `--nnodes=MIN:MAX`). Adding, removing or changing it replaces the job.",
			Attributes: mergeAttributes(boundsAttributes("", ""), map[string]schema.Attribute{
				"rendezvous_backend": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("c10d"),
					Validators:          []validator.String{stringvalidator.OneOf(jobs.RendezvousBackends...)},
					MarkdownDescription: "torchrun's `--rdzv_backend`: `c10d` (default; its store runs on the first worker), or `etcd` / `etcd-v2` at `rendezvous_endpoint`."},
				"rendezvous_endpoint": schema.StringAttribute{Optional: true, Validators: []validator.String{rendezvousEndpointRule},
					MarkdownDescription: "`host:port` of the rendezvous; required with an etcd backend. Default: `NAME-worker-0:" + "23456`."},
				"max_restarts": schema.Int64Attribute{Optional: true, Computed: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
					PlanModifiers: []planmodifier.Int64{defaultForNewJobsOnlyInt64{jobs.ElasticMaxRestarts}},
					MarkdownDescription: fmt.Sprintf("How often torchrun restarts the workers after a failure before the job fails "+
						"(`--max_restarts`). A worker that joins does not count; a worker that leaves (a scale-down) does: the processes of "+
						"the others fail their collectives and are restarted, so the default, %d for new jobs, lets the training go on "+
						"through rescales (torchrun's own, 0, would end it at the first scale-down). A job made without it keeps what it has.",
						jobs.ElasticMaxRestarts)},
			}),
		},
	}
	resp.Schema = jobSchema(ctx, jobSchemaSpec{
		kind: jobs.PyTorch,
		description: "A distributed PyTorch job run by training-operator: a Kubeflow `PyTorchJob` (`kubeflow.org/v1`) with a master and " +
			"`worker_count` workers, or with `elastic`, workers alone that meet at a rendezvous and rescale in place. It does what " +
			"`arena submit pytorch` does, tolerations included. Changing `worker_count` replaces a static job and rescales an elastic one in " +
			"place; changing anything baked into its pods replaces it. Destroy deletes the PyTorchJob and waits " +
			"until it, its Services and all its pods are gone.",
		roles:   "the master and workers",
		running: "the master and exactly `worker_count` workers Running, and the operator reporting the job running",
		own:     mergeAttributes(own, runPolicyAttributes(jobs.PyTorch, "a failed replica")),
	})
}

// ValidateConfig checks an elastic job's bounds and rendezvous at plan time.
func (r *pytorchJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateQueueing(ctx, req.Config, &resp.Diagnostics)
	e, at, ok := elasticBounds[pytorchElasticModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	if e.RendezvousBackend.IsUnknown() || e.RendezvousEndpoint.IsUnknown() {
		return
	}
	if err := jobs.CheckRendezvous(e.RendezvousBackend.ValueString(), e.RendezvousEndpoint.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(at.AtName("rendezvous_endpoint"), "Invalid rendezvous", nestedPath(at.AtName("rendezvous_endpoint"))+err.Error()+".")
	}
	if !e.MaxRestarts.IsUnknown() && !e.MaxRestarts.IsNull() && e.MaxRestarts.ValueInt64() == 0 {
		resp.Diagnostics.AddAttributeWarning(at.AtName("max_restarts"), "The first scale-down will end this job",
			"With max_restarts = 0 torchrun restarts nothing, and a scale-down fails the collectives of the workers that stay: the "+
				"job fails instead of going on at the new size. Leave it unset (the default restarts them) or give it room.")
	}
}

func (m *pytorchJobModel) spec(ctx context.Context) (jobs.Spec, diag.Diagnostics) {
	pod, diags := podOptionsOf(ctx, m)
	spec := jobs.PyTorchJobSpec{
		Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString(), Pod: pod,
		Command:      stringList(ctx, m.Command, &diags),
		Workers:      int32(m.WorkerCount.ValueInt64()),
		ProcsPerNode: int32(m.ProcessesPerWorker.ValueInt64()),
		RunPolicy:    m.runPolicy(),
	}
	if e := m.Elastic; e != nil {
		spec.Elastic = &jobs.PyTorchElastic{MinWorkers: int32(e.MinWorkers.ValueInt64()), MaxWorkers: int32(e.MaxWorkers.ValueInt64()),
			RendezvousBackend: e.RendezvousBackend.ValueString(), RendezvousEndpoint: e.RendezvousEndpoint.ValueString()}
		if !e.MaxRestarts.IsNull() {
			spec.Elastic.MaxRestarts = ptr.To(int32(e.MaxRestarts.ValueInt64()))
		}
	}
	return spec, diags
}

func (m *pytorchJobModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s, err := jobs.ReadPyTorchJob(obj)
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Error importing PyTorch job", err.Error())}
	}
	diags := setPodOf(ctx, m, s.Pod)
	m.Command = stringListValue(s.Command)
	m.WorkerCount = types.Int64Value(int64(s.Workers))
	m.ProcessesPerWorker = types.Int64Value(int64(cmp.Or(s.ProcsPerNode, jobs.DefaultSlots(s.Pod.GPUs))))
	m.Elastic = nil
	if e := s.Elastic; e != nil {
		// A job made without max_restarts has torchrun's 0.
		m.Elastic = &pytorchElasticModel{boundsModel: boundsModel{MinWorkers: types.Int64Value(int64(e.MinWorkers)), MaxWorkers: types.Int64Value(int64(e.MaxWorkers))},
			RendezvousBackend: types.StringValue(cmp.Or(e.RendezvousBackend, "c10d")), RendezvousEndpoint: optionalString(e.RendezvousEndpoint),
			MaxRestarts: types.Int64Value(int64(ptr.Deref(e.MaxRestarts, 0)))}
	}
	m.setRunPolicy(s.RunPolicy)
	return diags
}
