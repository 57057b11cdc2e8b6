package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

var (
	_ resource.ResourceWithConfigure      = (*tfJobResource)(nil)
	_ resource.ResourceWithImportState    = (*tfJobResource)(nil)
	_ resource.ResourceWithValidateConfig = (*tfJobResource)(nil)
)

func newTFJobResource() resource.Resource {
	return &tfJobResource{jobResource{kind: jobs.TF, newModel: func() jobModel { return &tfJobModel{} }}}
}

type tfJobResource struct {
	jobResource
}

type tfJobModel struct {
	jobFields
	tensorBoardFields
	workersField
	podModel
	podTemplateModel
	writeOnlyEnvModel
	rolesModel
	tasModel
	runPolicyModel
	Command types.List  `tfsdk:"command"`
	PSCount types.Int64 `tfsdk:"ps_count"`
	Chief   types.Bool  `tfsdk:"chief"`
	Dynamic types.Bool  `tfsdk:"dynamic_workers"`
}

func (r *tfJobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, Validators: []validator.String{jobNameRule("-worker-99999")},
			MarkdownDescription: "Name of the TFJob: a DNS label short enough for its pods' names."},
		"command": schema.ListAttribute{ElementType: types.StringType, Required: true,
			Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
			MarkdownDescription: "The command of every replica, in exec form; training-operator sets `TF_CONFIG` for each."},
		"worker_count": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 10000)},
			MarkdownDescription: "Number of workers. TensorFlow's cluster is static: every task's `TF_CONFIG` lists " +
				"every worker, so changing it **replaces** the job, unless `dynamic_workers` is set, when it rescales the running job in place. " +
				"With `wait_for = \"running\"` the apply waits until exactly that many workers run."},
		"dynamic_workers": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Let workers join and leave while the job runs (training-operator's `enableDynamicWorker`), so that " +
				"`worker_count` changes in place. Default false. training-operator then gives each task a sparse `TF_CONFIG`: a worker " +
				"lists only itself and the parameter servers, a parameter server only itself; and a failed worker no longer fails the job. " +
				"That suits an asynchronous parameter-server job (`ParameterServerStrategy`), so it needs `ps_count` of at least 1 and no " +
				"`chief`; a `MultiWorkerMirroredStrategy` job needs the full cluster and must leave it off."},
		"ps_count": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(0),
			Validators: []validator.Int64{int64validator.Between(0, 1000)},
			MarkdownDescription: "Number of parameter servers. Default 0. They get no GPUs; `roles = { ps = { cpu = ..., memory = ... } }` " +
				"gives them their CPU and memory."},
		"chief": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Run a chief as well, with the workers' resources. Default false."},
	}
	resp.Schema = jobSchema(ctx, jobSchemaSpec{
		kind: jobs.TF,
		description: "A distributed TensorFlow job run by training-operator: a Kubeflow `TFJob` (`kubeflow.org/v1`) with " +
			"`worker_count` workers, optional parameter servers and an optional chief, all running the same image and command. " +
			"It does what `arena submit tf` does, tolerations included. Changing `worker_count` replaces the job, or rescales it in place " +
			"with `dynamic_workers`; changing anything baked into its pods replaces it. Destroy deletes the TFJob and waits until it, its Services and all its pods are gone.",
		roles:   "every replica",
		running: "every pod of the job, exactly `worker_count` workers, Running, and the operator reporting it running",
		own:     mergeAttributes(own, runPolicyAttributes(jobs.TF, "a failed replica")),
	})
}

// ValidateConfig refuses dynamic workers where training-operator's sparse TF_CONFIG would leave
// tasks without the cluster they need.
func (r *tfJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateQueueing(ctx, req.Config, &resp.Diagnostics)
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

func (m *tfJobModel) spec(ctx context.Context) (jobs.Spec, diag.Diagnostics) {
	pod, diags := podOptionsOf(ctx, m)
	return jobs.TFJobSpec{
		Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString(), Pod: pod,
		Command:        stringList(ctx, m.Command, &diags),
		Workers:        int32(m.WorkerCount.ValueInt64()),
		PS:             int32(m.PSCount.ValueInt64()),
		Chief:          m.Chief.ValueBool(),
		DynamicWorkers: m.Dynamic.ValueBool(),
		RunPolicy:      m.runPolicy(),
	}, diags
}

func (m *tfJobModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s, err := jobs.ReadTFJob(obj)
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Error importing TF job", err.Error())}
	}
	diags := setPodOf(ctx, m, s.Pod)
	m.Command = stringListValue(s.Command)
	m.WorkerCount = types.Int64Value(int64(s.Workers))
	m.PSCount = types.Int64Value(int64(s.PS))
	m.Chief = types.BoolValue(s.Chief)
	m.Dynamic = types.BoolValue(s.DynamicWorkers)
	m.setRunPolicy(s.RunPolicy)
	return diags
}
