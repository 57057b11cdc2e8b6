package provider

import (
	"context"
	"fmt"
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
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
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
	tensorBoardFields
	workersField
	podModel
	podTemplateModel
	writeOnlyEnvModel
	rolesModel
	Launcher                   types.String `tfsdk:"launcher"`
	Script                     types.String `tfsdk:"script"`
	ScriptArgs                 types.List   `tfsdk:"script_args"`
	WorkerCommand              types.List   `tfsdk:"worker_command"`
	Elastic                    *boundsModel `tfsdk:"elastic"`
	ProcessesPerWorker         types.Int64  `tfsdk:"processes_per_worker"`
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
	count := []validator.Int64{int64validator.Between(1, jobs.MaxTaskNumber)}
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.RegexMatches(jobs.FrameworkNamePattern,
			"must be 1 to 63 lowercase letters and digits: FrameworkController allows no hyphens in a Framework name")},
			MarkdownDescription: "Name of the Framework, also the torchelastic rendezvous ID and the prefix of its Services (`NAME-etcd`, `NAME-worker`). " +
				"FrameworkController's rule: `^[a-z0-9]{1,63}$`, no hyphens; and at most 56 characters (51 with a `tensorboard`), so that " +
				"the Service names it derives stay within Kubernetes' 63."},
		"launcher": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.LauncherTorchrun),
			Validators: []validator.String{stringvalidator.OneOf(jobs.Launchers...)},
			MarkdownDescription: "What runs `script` in each worker: `torchrun` (default; PyTorch's own launcher, in every current " +
				"PyTorch image) or `torchelastic` (`python -m torchelastic.distributed.launch`, the 2020 torchelastic package of the " +
				"FrameworkController example's `torchelastic/examples` image). Both meet at the job's etcd (`--rdzv_endpoint=NAME-etcd:2379`, " +
				"`--rdzv_id=NAME`, `--nnodes=MIN:MAX`); torchrun through its `etcd-v2` backend, which like torchelastic's needs the " +
				"`python-etcd` package in the image: the upstream PyTorch images do not ship it (`pip install python-etcd` in yours). " +
				"Each worker waits until the etcd answers before it starts the launcher (python-etcd does not retry), and the launcher " +
				"restarts its training processes up to " + strconv.Itoa(jobs.ElasticMaxRestarts) + " times (`--max_restarts`): each scale-down " +
				"costs the remaining workers one restart, as the processes of a removed worker leave their collectives. Ignored with `worker_command`."},
		"script": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule},
			MarkdownDescription: "The training script the launcher runs in each worker, e.g. `/workspace/examples/imagenet/main.py`. Exactly one of `script` and `worker_command` is set."},
		"script_args": schema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.List{listvalidator.ConflictsWith(path.MatchRoot("worker_command"))},
			MarkdownDescription: "Arguments of the script."},
		"worker_command": schema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "What the workers run in place of the generated command, in exec form: " +
				"`torchrun --rdzv_backend=etcd-v2 --rdzv_endpoint=NAME-etcd:2379 --rdzv_id=NAME --nnodes=MIN:MAX --nproc_per_node=N --max_restarts=" +
				strconv.Itoa(jobs.ElasticMaxRestarts) + " SCRIPT ARGS`, which `sh -c` runs once the etcd answers. The command must wait for the etcd itself."},
		"worker_count": schema.Int64Attribute{Required: true, Validators: count,
			MarkdownDescription: "Number of workers, within `elastic`'s bounds. Changing it rescales the running job in place " +
				"(FrameworkController's example's guarded JSON patch of the worker task role's `taskNumber` and `minSucceededTaskCount`); the workers re-rendezvous."},
		"elastic": schema.SingleNestedAttribute{Required: true,
			MarkdownDescription: "The bounds of the training's workers, as the launcher's `--nnodes=MIN:MAX`. Changing them replaces the job.",
			Attributes:          boundsAttributes(" (the MIN of `--nnodes=MIN:MAX`)", " (the MAX of `--nnodes=MIN:MAX`)")},
		"processes_per_worker": schema.Int64Attribute{Optional: true, Computed: true,
			PlanModifiers:       []planmodifier.Int64{perGPUDefault{}},
			Validators:          []validator.Int64{int64validator.Between(1, 1024)},
			MarkdownDescription: "Training processes per worker (the launcher's `--nproc_per_node`). Default: the GPUs per worker, at least 1."},
		"max_retry_count": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(jobs.DefaultMaxRetryCount),
			Validators:          []validator.Int64{int64validator.Between(-2, 1000)},
			MarkdownDescription: "Retries of the job and of each worker (FrameworkController's fancy retry policy: transient failures retry, permanent ones do not). Default 2; -1 retries without limit, -2 always."},
		"pod_graceful_deletion_timeout_seconds": schema.Int64Attribute{Optional: true, Computed: true,
			Default: int64default.StaticInt64(jobs.DefaultPodGracefulDeletionTimeout), Validators: []validator.Int64{int64validator.AtLeast(0)},
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
		roles:    "the workers",
		running:  "the etcd and exactly `worker_count` workers Running, removed workers gone",
		own:      own,
		without:  []string{"required_topology", "preferred_topology"},
		unqueued: true,
		kind:     jobs.Elastic,
	})
}

func (r *elasticJobResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		exactlyOneOf{"script", "worker_command"},
	}
}

// ValidateConfig checks torchelastic's bounds at plan time: min_workers <= worker_count <= max_workers.
func (r *elasticJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateQueueing(ctx, req.Config, &resp.Diagnostics)
	var name types.String
	var tensorBoard types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("tensorboard"), &tensorBoard)...)
	if !name.IsUnknown() && !name.IsNull() && !tensorBoard.IsUnknown() {
		if err := jobs.CheckElasticName(name.ValueString(), !tensorBoard.IsNull()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Invalid job name", err.Error())
		}
	}
	elasticBounds[boundsModel](ctx, req.Config, &resp.Diagnostics)
	// FrameworkController's CRD and pods have no seccompProfile: one set here would be lost in
	// the cluster and planned again on every refresh.
	seccomp := path.Root("security_context").AtName("seccomp_profile")
	var profile types.String
	if d := req.Config.GetAttribute(ctx, seccomp, &profile); !d.HasError() && !profile.IsNull() && !profile.IsUnknown() {
		resp.Diagnostics.AddAttributeError(seccomp, "security_context.seccomp_profile is not supported on an elastic job",
			jobs.Elastic.OperatorDrops+". Leave seccomp_profile unset here, or run the training as a training_pytorch_job with elastic, "+
				"whose operator keeps it.")
	}
}

func (m *elasticJobModel) spec(ctx context.Context) (jobs.Spec, diag.Diagnostics) {
	pod, diags := podOptionsOf(ctx, m)
	spec := jobs.ElasticJobSpec{
		Name:                       m.Name.ValueString(),
		Namespace:                  m.Namespace.ValueString(),
		Pod:                        pod,
		Launcher:                   m.Launcher.ValueString(),
		Script:                     m.Script.ValueString(),
		ScriptArgs:                 stringList(ctx, m.ScriptArgs, &diags),
		Command:                    stringList(ctx, m.WorkerCommand, &diags),
		Workers:                    int32(m.WorkerCount.ValueInt64()),
		ProcsPerNode:               int32(m.ProcessesPerWorker.ValueInt64()),
		MaxRetryCount:              int32(m.MaxRetryCount.ValueInt64()),
		PodGracefulDeletionTimeout: m.PodGracefulDeletionTimeout.ValueInt64(),
		EtcdNetworkPolicy:          m.EtcdNetworkPolicy.ValueBool(),
	}
	if e := m.Elastic; e != nil {
		spec.MinWorkers, spec.MaxWorkers = int32(e.MinWorkers.ValueInt64()), int32(e.MaxWorkers.ValueInt64())
	}
	return spec, diags
}

func (m *elasticJobModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s, err := jobs.ReadElasticJob(obj)
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Error importing elastic job", err.Error())}
	}
	diags := setPodOf(ctx, m, s.Pod)
	m.Launcher = types.StringValue(s.Launcher)
	if s.Launcher == "" {
		m.Launcher = types.StringValue(jobs.LauncherTorchrun) // made with a command: the default, unused
	}
	m.Script = optionalString(s.Script)
	m.ScriptArgs = optionalList(ctx, s.ScriptArgs, &diags)
	m.WorkerCommand = optionalList(ctx, s.Command, &diags)
	m.WorkerCount = types.Int64Value(int64(s.Workers))
	m.Elastic = &boundsModel{MinWorkers: types.Int64Value(int64(s.MinWorkers)), MaxWorkers: types.Int64Value(int64(s.MaxWorkers))}
	m.ProcessesPerWorker = types.Int64Value(int64(s.ProcsPerNode))
	m.MaxRetryCount = types.Int64Value(int64(s.MaxRetryCount))
	m.PodGracefulDeletionTimeout = types.Int64Value(s.PodGracefulDeletionTimeout)
	m.EtcdNetworkPolicy = types.BoolValue(s.EtcdNetworkPolicy)
	return diags
}

// defaultForNewJobsOnlyInt64 gives an unset number its default for a new job and keeps, for a
// job that exists, the value it has: a provider release that changes a default does not replace
// the jobs made with the old one.
type defaultForNewJobsOnlyInt64 struct{ value int64 }

func (d defaultForNewJobsOnlyInt64) Description(context.Context) string {
	return fmt.Sprintf("unset, %d for a new job; a job that exists keeps its value", d.value)
}
func (d defaultForNewJobsOnlyInt64) MarkdownDescription(ctx context.Context) string {
	return d.Description(ctx)
}

func (defaultForNewJobsOnlyInt64) ModifierNoOpOnUnchangedPlan() {}

func (d defaultForNewJobsOnlyInt64) PlanModifyInt64(_ context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	switch {
	case !req.ConfigValue.IsNull():
	case !req.StateValue.IsNull() && !req.StateValue.IsUnknown():
		resp.PlanValue = req.StateValue
	default:
		resp.PlanValue = types.Int64Value(d.value)
	}
}
