package provider

import (
	"cmp"
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

var (
	_ resource.ResourceWithConfigure      = (*mpiJobResource)(nil)
	_ resource.ResourceWithImportState    = (*mpiJobResource)(nil)
	_ resource.ResourceWithValidateConfig = (*mpiJobResource)(nil)
)

func newMPIJobResource() resource.Resource {
	return &mpiJobResource{jobResource{kind: jobs.MPI, newModel: func() jobModel { return &mpiJobModel{} }}}
}

type mpiJobResource struct {
	jobResource
}

type mpiJobModel struct {
	jobFields
	tensorBoardFields
	workersField
	podModel
	podTemplateModel
	writeOnlyEnvModel
	rolesModel
	tasModel
	runPolicyModel
	Command            types.List   `tfsdk:"command"`
	WorkerCommand      types.List   `tfsdk:"worker_command"`
	ProcessesPerWorker types.Int64  `tfsdk:"processes_per_worker"`
	Elastic            *boundsModel `tfsdk:"elastic"`
	MountOnLauncher    types.Bool   `tfsdk:"mount_data_on_launcher"`
	SSHAuthPath        types.String `tfsdk:"ssh_auth_mount_path"`
}

func (r *mpiJobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, Validators: []validator.String{jobNameRule("-launcher-xxxxx")},
			MarkdownDescription: "Name of the MPIJob: a DNS label short enough for its pods' names."},
		"command": schema.ListAttribute{ElementType: types.StringType, Required: true,
			Validators: []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "The command that starts the training, in exec form: the launcher's, usually starting with `mpirun`. " +
				"With `elastic` it is the training program alone (`[\"python\", \"train.py\"]`), which the launcher runs under " +
				"`horovodrun -np N --min-np MIN --max-np MAX --slots-per-host SLOTS --host-discovery-script " + jobs.DiscoverHostsScript + "`, " +
				"counting one process per slot of each worker."},
		"worker_command": schema.ListAttribute{ElementType: types.StringType, Optional: true, Computed: true,
			Default:             listdefault.StaticValue(stringListValue(jobs.DefaultWorkerCommand)),
			Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "What the workers run in place of the default: the SSH daemon (`/usr/sbin/sshd -De`) that mpi-operator v2's launcher reaches them through."},
		"worker_count": schema.Int64Attribute{Required: true,
			Validators: []validator.Int64{int64validator.Between(1, 10000)},
			MarkdownDescription: "Number of workers. A plain `mpirun` fixes its ranks when it starts and never " +
				"reads the hostfile again, so changing it **replaces** the job. With `elastic`, elastic Horovod finds its hosts " +
				"through mpi-operator's discovery script while it runs, and changing it rescales the running job in place within " +
				"its bounds. With `wait_for = \"running\"` the apply waits until exactly that many workers run."},
		"mount_data_on_launcher": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Mount `data_volumes` on the launcher as well as on the workers. " +
				"Default false: the launcher usually only starts the workers, and a `ReadWriteOnce` claim mounted by a launcher on " +
				"another node would keep workers from starting (Multi-Attach)."},
		"ssh_auth_mount_path": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.DefaultSSHAuthMountPath),
			Validators: []validator.String{mountPathRule},
			MarkdownDescription: "Where mpi-operator mounts the job's SSH keys in the launcher and the workers (`spec.sshAuthMountPath`). " +
				"Default `" + jobs.DefaultSSHAuthMountPath + "`, for an sshd that runs as root. An image whose sshd runs as an unprivileged " +
				"user (mpi-operator's own images: `mpiuser`, `/home/mpiuser/.ssh`, sshd on port 2222 started with " +
				"`worker_command = [\"/usr/sbin/sshd\", \"-De\", \"-f\", \"/home/mpiuser/.sshd_config\"]`) names that user's folder, with the " +
				"user's uid as `security_context.run_as_user` and its group as `fs_group` (the keys are mounted with the pod's group); " +
				"with the rest of `security_context` as Pod Security `restricted` asks, such a job runs in a namespace that enforces it. " +
				"Changing it replaces the job."},
		"processes_per_worker": schema.Int64Attribute{Optional: true, Computed: true,
			PlanModifiers:       []planmodifier.Int64{perGPUDefault{}},
			Validators:          []validator.Int64{int64validator.Between(1, 1024)},
			MarkdownDescription: "MPI processes (mpi-operator's slots) per worker. Default: the GPUs per worker, at least 1."},
		"elastic": schema.SingleNestedAttribute{Optional: true,
			MarkdownDescription: "Run elastic Horovod, so that `worker_count` changes in place: `command` runs under `horovodrun` " +
				"with mpi-operator's host discovery script, which lists the Running workers as they come and go. The training " +
				"program must use Horovod's elastic API (`hvd.elastic.run`). Adding, changing or removing it replaces the job.",
			Attributes: boundsAttributes(" (`--min-np` is this times the processes per worker)", " (`--max-np` is this times the processes per worker)")},
	}
	resp.Schema = jobSchema(ctx, jobSchemaSpec{
		description: "An MPI (Horovod) training job run by mpi-operator: a Kubeflow `MPIJob` (`kubeflow.org/v2beta1`) " +
			"with one launcher and `worker_count` workers. It does what `arena submit mpi` does. Changing `worker_count` replaces " +
			"a plain `mpirun` job and rescales an `elastic` (elastic Horovod) one in place; changing anything baked into its pods replaces it. Destroy deletes the MPIJob and waits until " +
			"it, what mpi-operator made for it (launcher Job, hostfile ConfigMap, Service) and all its pods are gone; its SSH Secret is " +
			"left to the garbage collector, which deletes it with them (the provider does not read Secrets).",
		roles:   "the launcher and workers",
		running: "every pod of the job, exactly `worker_count` workers, Running, and the operator reporting it running",
		own:     mergeAttributes(own, runPolicyAttributes(jobs.MPI, "the launcher")),
		kind:    jobs.MPI,
	})
}

// ValidateConfig checks an elastic job's bounds at plan time: min_workers <= worker_count <= max_workers.
func (r *mpiJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateQueueing(ctx, req.Config, &resp.Diagnostics)
	elasticBounds[boundsModel](ctx, req.Config, &resp.Diagnostics)
}

func (m *mpiJobModel) spec(ctx context.Context) (jobs.Spec, diag.Diagnostics) {
	pod, diags := podOptionsOf(ctx, m)
	spec := jobs.MPIJobSpec{
		Name:                m.Name.ValueString(),
		Namespace:           m.Namespace.ValueString(),
		Pod:                 pod,
		LauncherCommand:     stringList(ctx, m.Command, &diags),
		WorkerCommand:       stringList(ctx, m.WorkerCommand, &diags),
		Workers:             int32(m.WorkerCount.ValueInt64()),
		SlotsPerWorker:      int32(m.ProcessesPerWorker.ValueInt64()),
		RunPolicy:           m.runPolicy(),
		MountDataOnLauncher: m.MountOnLauncher.ValueBool(),
	}
	if p := m.SSHAuthPath.ValueString(); p != jobs.DefaultSSHAuthMountPath {
		// mpi-operator's default is left to it, so a job says what it did before the attribute.
		spec.SSHAuthMountPath = p
	}
	if e := m.Elastic; e != nil {
		spec.Elastic = &jobs.MPIElastic{MinWorkers: int32(e.MinWorkers.ValueInt64()), MaxWorkers: int32(e.MaxWorkers.ValueInt64())}
	}
	return spec, diags
}

func (m *mpiJobModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s, err := jobs.ReadMPIJob(obj)
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Error importing MPI job", err.Error())}
	}
	diags := setPodOf(ctx, m, s.Pod)
	m.Command = stringListValue(s.LauncherCommand)
	m.WorkerCommand = stringListValue(s.WorkerCommand)
	m.WorkerCount = types.Int64Value(int64(s.Workers))
	m.ProcessesPerWorker = types.Int64Value(int64(s.SlotsPerWorker))
	m.MountOnLauncher = types.BoolValue(s.MountDataOnLauncher)
	m.SSHAuthPath = types.StringValue(cmp.Or(s.SSHAuthMountPath, jobs.DefaultSSHAuthMountPath))
	m.Elastic = nil
	if e := s.Elastic; e != nil {
		m.Elastic = &boundsModel{MinWorkers: types.Int64Value(int64(e.MinWorkers)), MaxWorkers: types.Int64Value(int64(e.MaxWorkers))}
	}
	m.setRunPolicy(s.RunPolicy)
	return diags
}

func stringListValue(l []string) types.List {
	values := make([]attr.Value, len(l))
	for i, s := range l {
		values[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, values)
}
