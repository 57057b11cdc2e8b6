package provider

import (
	"context"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

var (
	_ resource.ResourceWithConfigure        = (*elasticJobResource)(nil)
	_ resource.ResourceWithImportState      = (*elasticJobResource)(nil)
	_ resource.ResourceWithConfigValidators = (*elasticJobResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*elasticJobResource)(nil)
)

func newElasticJobResource() resource.Resource {
	return &elasticJobResource{jobResource{kind: jobs.Elastic, newModel: func() jobModel { return &elasticJobModel{} }}}
}

type elasticJobResource struct {
	jobResource
}

type elasticJobModel struct {
	jobFields
	workersField
	podModel
	Launcher                   types.String `tfsdk:"launcher"`
	Script                     types.String `tfsdk:"script"`
	ScriptArgs                 types.List   `tfsdk:"script_args"`
	Command                    types.List   `tfsdk:"command"`
	MinWorkers                 types.Int64  `tfsdk:"min_workers"`
	MaxWorkers                 types.Int64  `tfsdk:"max_workers"`
	ProcessesPerWorker         types.Int64  `tfsdk:"processes_per_worker"`
	EtcdImage                  types.String `tfsdk:"etcd_image"`
	EtcdCPU                    types.String `tfsdk:"etcd_cpu"`
	EtcdMemory                 types.String `tfsdk:"etcd_memory"`
	MaxRetryCount              types.Int64  `tfsdk:"max_retry_count"`
	PodGracefulDeletionTimeout types.Int64  `tfsdk:"pod_graceful_deletion_timeout_seconds"`
	EtcdNetworkPolicy          types.Bool   `tfsdk:"etcd_network_policy"`
	Dependents                 types.List   `tfsdk:"dependents"`
}

func (m *elasticJobModel) dependents() *types.List { return &m.Dependents }

// plannedDependents are the dependents the plan asks for: the two Services, and the etcd's
// NetworkPolicy with etcd_network_policy.
func plannedDependents(ctx context.Context, plan tfsdk.Plan) ([]jobs.Dependent, bool, diag.Diagnostics) {
	var name types.String
	var policy types.Bool
	diags := plan.GetAttribute(ctx, path.Root("name"), &name)
	diags.Append(plan.GetAttribute(ctx, path.Root("etcd_network_policy"), &policy)...)
	if diags.HasError() || name.IsUnknown() || name.IsNull() || policy.IsUnknown() {
		return nil, false, diags
	}
	return jobs.ElasticDependents(name.ValueString(), policy.ValueBool()), true, diags
}

func (m *elasticJobModel) gracePeriod() time.Duration {
	return time.Duration(m.PodGracefulDeletionTimeout.ValueInt64()) * time.Second
}

func (r *elasticJobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceInt := []planmodifier.Int64{int64planmodifier.RequiresReplace()}
	replaceList := []planmodifier.List{listplanmodifier.RequiresReplace()}
	count := []validator.Int64{int64validator.Between(1, jobs.MaxTaskNumber)}
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, PlanModifiers: replaceString,
			Validators: []validator.String{stringvalidator.RegexMatches(jobs.FrameworkNamePattern,
				"must be 1 to 63 lowercase letters and digits: FrameworkController allows no hyphens in a Framework name")},
			MarkdownDescription: "Name of the Framework, also the torchelastic rendezvous ID and the prefix of its Services (`NAME-etcd`, `NAME-worker`). " +
				"FrameworkController's rule: `^[a-z0-9]{1,63}$`, no hyphens; and at most 56 characters (51 with a `tensorboard`), so that " +
				"the Service names it derives stay within Kubernetes' 63."},
		"launcher": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.LauncherTorchrun),
			PlanModifiers: replaceString, Validators: []validator.String{stringvalidator.OneOf(jobs.Launchers...)},
			MarkdownDescription: "What runs `script` in each worker: `torchrun` (default; PyTorch's own launcher, in every current " +
				"PyTorch image) or `torchelastic` (`python -m torchelastic.distributed.launch`, the 2020 torchelastic package of the " +
				"FrameworkController example's `torchelastic/examples` image). Both meet at the job's etcd (`--rdzv_endpoint=NAME-etcd:2379`, " +
				"`--rdzv_id=NAME`, `--nnodes=MIN:MAX`); torchrun through its `etcd-v2` backend, which like torchelastic's needs the " +
				"`python-etcd` package in the image: the upstream PyTorch images do not ship it (`pip install python-etcd` in yours). " +
				"Each worker waits until the etcd answers before it starts the launcher (python-etcd does not retry), and the launcher " +
				"restarts its training processes up to " + strconv.Itoa(jobs.ElasticMaxRestarts) + " times (`--max_restarts`): each scale-down " +
				"costs the remaining workers one restart, as the processes of a removed worker leave their collectives. Ignored with `command`."},
		"script": schema.StringAttribute{Optional: true, PlanModifiers: replaceString,
			Validators:          []validator.String{nonBlankRule},
			MarkdownDescription: "The training script the launcher runs in each worker, e.g. `/workspace/examples/imagenet/main.py`. Exactly one of `script` and `command` is set."},
		"script_args": schema.ListAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceList,
			Validators:          []validator.List{listvalidator.ConflictsWith(path.MatchRoot("command"))},
			MarkdownDescription: "Arguments of the script."},
		"command": schema.ListAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceList,
			Validators: []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "Escape hatch: the workers' whole command, in exec form, instead of the generated " +
				"`torchrun --rdzv_backend=etcd-v2 --rdzv_endpoint=NAME-etcd:2379 --rdzv_id=NAME --nnodes=MIN:MAX --nproc_per_node=N --max_restarts=" +
				strconv.Itoa(jobs.ElasticMaxRestarts) + " SCRIPT ARGS`, which `sh -c` runs once the etcd answers. The command must wait for the etcd itself."},
		"worker_count": schema.Int64Attribute{Required: true, Validators: count,
			PlanModifiers: []planmodifier.Int64{workerCountPlan{kind: jobs.Elastic, inPlace: alwaysInPlace, description: "in place"}},
			MarkdownDescription: "Number of workers, within `min_workers` and `max_workers`. Changing it rescales the running job in place " +
				"(the seed's guarded JSON patch of the worker task role's `taskNumber` and `minSucceededTaskCount`); the workers re-rendezvous."},
		"min_workers": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(1),
			PlanModifiers: replaceInt, Validators: count,
			MarkdownDescription: "Fewest workers the training goes on with: the MIN of the launcher's `--nnodes=MIN:MAX`. Default 1. Changing it replaces the job."},
		"max_workers": schema.Int64Attribute{Required: true, PlanModifiers: replaceInt, Validators: count,
			MarkdownDescription: "Most workers the job can be scaled to: the MAX of `--nnodes=MIN:MAX`. Changing it replaces the job."},
		"processes_per_worker": schema.Int64Attribute{Optional: true, Computed: true,
			PlanModifiers:       []planmodifier.Int64{perGPUDefault{}, int64planmodifier.RequiresReplace()},
			Validators:          []validator.Int64{int64validator.Between(1, 1024)},
			MarkdownDescription: "Training processes per worker (the launcher's `--nproc_per_node`). Default: the GPUs per worker, at least 1."},
		"etcd_image": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.DefaultEtcdImage),
			PlanModifiers: []planmodifier.String{defaultForNewJobsOnly{}, stringplanmodifier.RequiresReplace()}, Validators: []validator.String{nonBlankRule, etcdImageRule},
			MarkdownDescription: "Image of the job's own rendezvous etcd. Default `" + jobs.DefaultEtcdImage + "` for new jobs; a job made " +
				"with an earlier default keeps its image (a new default never replaces a running job). The etcd serves the " +
				"v2 API the rendezvous speaks (`--enable-v2`), which etcd 3.6 removed: an image tagged 3.6 or later is a plan-time error."},
		"etcd_cpu": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "CPU of the etcd pod as a Kubernetes quantity."},
		"etcd_memory": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Memory of the etcd pod as a Kubernetes quantity."},
		"max_retry_count": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(jobs.DefaultMaxRetryCount),
			PlanModifiers: replaceInt, Validators: []validator.Int64{int64validator.Between(-2, 1000)},
			MarkdownDescription: "Retries of the job and of each worker (FrameworkController's fancy retry policy: transient failures retry, permanent ones do not). Default 2; -1 retries without limit, -2 always."},
		"pod_graceful_deletion_timeout_seconds": schema.Int64Attribute{Optional: true, Computed: true,
			Default: int64default.StaticInt64(jobs.DefaultPodGracefulDeletionTimeout), PlanModifiers: replaceInt,
			Validators: []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Seconds FrameworkController waits for a pod's graceful deletion before forcing it. Default 1800, as in the example. " +
				"The default delete timeout is this plus 10 minutes, so that destroy waits out the pods' grace period."},
		"etcd_network_policy": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "Make a NetworkPolicy `NAME-etcd` that admits to the etcd, on port 2379, only the job's own pods (the " +
				"rendezvous has no authentication). Default true. It takes effect where the cluster's network plugin enforces NetworkPolicies. " +
				"Changing it adds or removes the policy in place."},
		"dependents": dependentsAttribute(plannedDependents, "The objects the job owns besides the Framework, as `KIND/NAME`: "+
			"`Service/NAME-etcd` (the rendezvous), `Service/NAME-worker` (the workers' DNS names) and, with `etcd_network_policy`, "+
			"`NetworkPolicy/NAME-etcd`, as found in the cluster. One deleted behind Terraform's back shows in the plan as a change that "+
			"makes it again, in place: the running workers find a Service again by its name."),
	}
	resp.Schema = jobSchema(ctx, jobSchemaSpec{
		description: "Elastic PyTorch training run by FrameworkController, with a rendezvous etcd of its own: a `Framework` " +
			"(`frameworkcontroller.microsoft.com/v1`) with an `etcd` task role and a `worker` task role running torchrun (or the torchelastic launcher), " +
			"a Service `NAME-etcd` the workers find the etcd through, and a headless Service `NAME-worker` they find each other through. " +
			"Changing `worker_count` rescales the job in place; destroy removes the Framework, its ConfigMap, both Services and every pod, the etcd's included, and waits until all are gone.",
		roles:   "the workers",
		running: "the etcd and exactly `worker_count` workers Running, removed workers gone",
		own:     own,
	})
}

func (r *elasticJobResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		exactlyOneOf{"script", "command"},
	}
}

// ValidateConfig checks torchelastic's bounds at plan time: min_workers <= worker_count <= max_workers.
func (r *elasticJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateQueueing(ctx, req.Config, &resp.Diagnostics)
	var name types.String
	var tensorBoard types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("tensorboard"), &tensorBoard)...)
	if !name.IsUnknown() && !name.IsNull() && !tensorBoard.IsUnknown() {
		if err := jobs.CheckElasticName(name.ValueString(), len(tensorBoard.Elements()) > 0); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Invalid job name", err.Error())
		}
	}
	var workers, minWorkers, maxWorkers types.Int64
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("worker_count"), &workers)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("min_workers"), &minWorkers)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("max_workers"), &maxWorkers)...)
	if !resp.Diagnostics.HasError() {
		validateBounds(workers, minWorkers, maxWorkers, path.Empty(), &resp.Diagnostics)
	}
}

func (m *elasticJobModel) spec(ctx context.Context) (jobs.Spec, diag.Diagnostics) {
	pod, diags := m.podOptions(ctx)
	spec := jobs.ElasticJobSpec{
		Name:                       m.Name.ValueString(),
		Namespace:                  m.Namespace.ValueString(),
		Pod:                        pod,
		Launcher:                   m.Launcher.ValueString(),
		Script:                     m.Script.ValueString(),
		ScriptArgs:                 stringList(ctx, m.ScriptArgs, &diags),
		Command:                    stringList(ctx, m.Command, &diags),
		Workers:                    int32(m.WorkerCount.ValueInt64()),
		MinWorkers:                 int32(m.MinWorkers.ValueInt64()),
		MaxWorkers:                 int32(m.MaxWorkers.ValueInt64()),
		ProcsPerNode:               int32(m.ProcessesPerWorker.ValueInt64()),
		EtcdImage:                  m.EtcdImage.ValueString(),
		EtcdCPU:                    m.EtcdCPU.ValueString(),
		EtcdMemory:                 m.EtcdMemory.ValueString(),
		MaxRetryCount:              int32(m.MaxRetryCount.ValueInt64()),
		PodGracefulDeletionTimeout: m.PodGracefulDeletionTimeout.ValueInt64(),
		EtcdNetworkPolicy:          m.EtcdNetworkPolicy.ValueBool(),
	}
	return spec, diags
}

func (m *elasticJobModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s, err := jobs.ReadElasticJob(obj)
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Error importing elastic job", err.Error())}
	}
	diags := m.setFromPodOptions(ctx, s.Pod)
	m.Launcher = types.StringValue(s.Launcher)
	if s.Launcher == "" {
		m.Launcher = types.StringValue(jobs.LauncherTorchrun) // made with a command: the default, unused
	}
	m.Script = optionalString(s.Script)
	m.ScriptArgs = optionalList(ctx, s.ScriptArgs, &diags)
	m.Command = optionalList(ctx, s.Command, &diags)
	m.WorkerCount = types.Int64Value(int64(s.Workers))
	m.MinWorkers = types.Int64Value(int64(s.MinWorkers))
	m.MaxWorkers = types.Int64Value(int64(s.MaxWorkers))
	m.ProcessesPerWorker = types.Int64Value(int64(s.ProcsPerNode))
	m.EtcdImage = types.StringValue(s.EtcdImage)
	m.EtcdCPU = sameQuantity(m.EtcdCPU, s.EtcdCPU)
	m.EtcdMemory = sameQuantity(m.EtcdMemory, s.EtcdMemory)
	m.MaxRetryCount = types.Int64Value(int64(s.MaxRetryCount))
	m.PodGracefulDeletionTimeout = types.Int64Value(s.PodGracefulDeletionTimeout)
	m.EtcdNetworkPolicy = types.BoolValue(s.EtcdNetworkPolicy)
	return diags
}

// defaultForNewJobsOnly keeps, for an attribute left unset, the value the job has: the
// attribute's default applies to new jobs, and a provider release that changes it does not
// replace the jobs made with the old one.
type defaultForNewJobsOnly struct{}

func (defaultForNewJobsOnly) Description(context.Context) string {
	return "an unset value keeps the job's current one; the default applies to new jobs"
}
func (d defaultForNewJobsOnly) MarkdownDescription(ctx context.Context) string {
	return d.Description(ctx)
}

func (defaultForNewJobsOnly) keepsUnchangedPlan() {}

func (defaultForNewJobsOnly) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.ConfigValue.IsNull() && !req.StateValue.IsNull() && !req.StateValue.IsUnknown() {
		resp.PlanValue = req.StateValue
	}
}
