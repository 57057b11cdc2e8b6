package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

var (
	_ resource.ResourceWithConfigure      = (*trainJobResource)(nil)
	_ resource.ResourceWithImportState    = (*trainJobResource)(nil)
	_ resource.ResourceWithValidateConfig = (*trainJobResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*trainJobResource)(nil)
)

func newTrainJobResource() resource.Resource {
	return &trainJobResource{jobResource{kind: jobs.Train, newModel: func() jobModel { return &trainJobModel{} }}}
}

type trainJobResource struct {
	jobResource
}

type trainJobModel struct {
	jobFields
	podModel
	writeOnlyEnvModel
	SensitiveEnvWONames   types.List   `tfsdk:"sensitive_env_wo_names"`
	Runtime               types.String `tfsdk:"runtime"`
	RuntimeKind           types.String `tfsdk:"runtime_kind"`
	Command               types.List   `tfsdk:"command"`
	Args                  types.List   `tfsdk:"args"`
	NumNodes              types.Int64  `tfsdk:"num_nodes"`
	ProcessesPerNode      types.Int64  `tfsdk:"processes_per_node"`
	Suspend               types.Bool   `tfsdk:"suspend"`
	QueueName             types.String `tfsdk:"queue_name"`
	WorkloadPriorityClass types.String `tfsdk:"workload_priority_class"`
	ActiveDeadlineSeconds types.Int64  `tfsdk:"active_deadline_seconds"`
	PodLabels             types.Map    `tfsdk:"pod_labels"`
	PodAnnotations        types.Map    `tfsdk:"pod_annotations"`
	// runtimeJobs are the runtime's replicated jobs, read from the cluster before create (see
	// resolve): the runtime patch places the pods of each.
	runtimeJobs []jobs.RuntimeJob
	// readRuntime is what runtime read, so that one plan's checks read the runtime once.
	readRuntime *unstructured.Unstructured
}

func (m *trainJobModel) workers() *types.Int64 { return &m.NumNodes }

func (m *trainJobModel) suspended() bool { return m.Suspend.ValueBool() }

func (m *trainJobModel) suspendKnown() {
	if m.Suspend.IsUnknown() {
		m.Suspend = types.BoolValue(false)
	}
}

func (r *trainJobResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	own := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, Validators: []validator.String{jobNameRule("-launcher-0")},
			MarkdownDescription: "Name of the TrainJob, and of the JobSet Trainer makes for it: a DNS label short enough for the names of " +
				"its Jobs (`NAME-node-0`, `NAME-launcher-0`)."},
		"runtime": schema.StringAttribute{Required: true, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "Name of the training runtime the job runs on (`spec.runtimeRef.name`): a ClusterTrainingRuntime such as Trainer's " +
				"`torch-distributed`, or with `runtime_kind = \"TrainingRuntime\"` one in the job's namespace. It may be made in the same " +
				"configuration (`training_runtime.NAME.name`). One that does not exist fails the apply before anything is created, naming the " +
				"runtimes there are."},
		"runtime_kind": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.ClusterTrainingRuntimeKind),
			Validators:          []validator.String{stringvalidator.OneOf(jobs.ClusterTrainingRuntimeKind, jobs.TrainingRuntimeKind)},
			MarkdownDescription: "`ClusterTrainingRuntime` (default) or `TrainingRuntime` (namespaced); `training_runtime.NAME.kind` says which."},
		"image": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule},
			MarkdownDescription: "Container image of the trainer (`spec.trainer.image`); default the runtime's."},
		"command": schema.ListAttribute{ElementType: types.StringType, Optional: true, MarkdownDescription: "The trainer's command (`spec.trainer.command`), in exec form; default the runtime's. With a torch runtime, " +
			"Trainer gives every node torchrun's `PET_NNODES`, `PET_NPROC_PER_NODE`, `PET_NODE_RANK`, `PET_MASTER_ADDR` and `PET_MASTER_PORT`; " +
			"with an MPI runtime the command is the launcher's (`mpirun ...`), with a hostfile of the nodes."},
		"args": schema.ListAttribute{ElementType: types.StringType, Optional: true, MarkdownDescription: "The trainer's arguments (`spec.trainer.args`)."},
		"num_nodes": schema.Int64Attribute{Required: true,
			Validators: []validator.Int64{int64validator.Between(1, 10000)},
			MarkdownDescription: "Number of training nodes (`spec.trainer.numNodes`), each one pod with the resources above. Trainer's API makes it " +
				"immutable, so changing it **replaces** the job (the plan shows `-/+`)."},
		"processes_per_node": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, 1024)},
			MarkdownDescription: "Training processes per node (`spec.trainer.numProcPerNode`): torchrun's `--nproc_per_node`, or an MPI runtime's " +
				"slots per node. Default the runtime's (torch: `auto`, one per GPU)."},
		"suspend": schema.BoolAttribute{Optional: true, Computed: true, PlanModifiers: keepBool,
			MarkdownDescription: "Suspend the job (`spec.suspend`): Trainer suspends its JobSet, whose pods are deleted, and setting it back to false " +
				"starts them again, in place. With `suspend = true` create and update do not wait for the job to run." + suspendUnset},
		"workload_priority_class": workloadPriorityClassAttribute(),
		"queue_name": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule, labelValueRule},
			MarkdownDescription: "Kueue LocalQueue to submit the job to (label `" + jobs.QueueLabel + "`): Kueue holds it suspended until its quota " +
				"admits it (Kueue's TrainJob integration). Changing it replaces the job." + queueNamePlan},
		"active_deadline_seconds": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)},
			MarkdownDescription: "Seconds the job may run before Trainer fails it (`spec.activeDeadlineSeconds`, immutable: changing it replaces the job)."},
		"pod_labels": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.KeysAre(labelKeyRule), mapvalidator.ValueStringsAre(labelValueRule)},
			MarkdownDescription: "Labels of every node's pods, through this provider's runtime patch. Trainer's API lets the runtime patch " +
				"change only while the job is suspended, so changing them **replaces** the job. Only these keys are Terraform's."},
		"pod_annotations": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.KeysAre(labelKeyRule)},
			MarkdownDescription: "Annotations of every node's pods, through this provider's runtime patch; changing them **replaces** the job. " +
				"Only these keys are Terraform's."},
	}
	resp.Schema = jobSchema(ctx, jobSchemaSpec{
		description: "A Kubeflow Trainer v2 job: a `TrainJob` (`trainer.kubeflow.org/v1alpha1`) that runs on a training runtime (`training_runtime`, " +
			"or one of Trainer's own) with `num_nodes` nodes. Trainer makes a JobSet of it, and JobSet a Job per replicated job of the runtime. " +
			"The image, command, env and resources per node go to the job's trainer; placement (tolerations, node selector), volumes, the " +
			"service account, pull secrets and `pod_labels` go to this provider's own entry of the job's `runtimePatches`, on every replicated " +
			"job of the runtime. Trainer's API makes all of these immutable, so changing any of them replaces the job; `suspend` and the " +
			"object's own `labels` and `annotations` change in place. What Trainer v2.3.0's runtime patch has no place for (a priority " +
			"class, a pull policy, pod fields such as `host_network`, per-role settings, pod patches) is the runtime's to say (`training_runtime`). " +
			"Destroy deletes the TrainJob and waits until it, its JobSet, Jobs, Service and pods are gone.",
		roles: "every node",
		metadata: metadataDoc{on: "the TrainJob object (not its pods: see `pod_labels` and `pod_annotations`)",
			change: "Changing them updates the TrainJob object in place."},
		running: "every replicated job of its JobSet reported ready by JobSet (with a torch runtime, exactly `num_nodes` node pods Running)",
		own:     mergeAttributes(own, trainWriteOnlyEnvAttributes()),
		// Trainer v2.3.0's runtime patch, through which a TrainJob sets its pods' fields, has no
		// place for these (jobs.NewTrainJob refuses them); nor does the provider run a TrainJob's
		// TensorBoard.
		without: []string{"env_from_secrets", "priority_class_name", "image_pull_policy", "tensorboard", "tensorboard_url", "roles", "pod_patch",
			"scheduler_name", "host_network", "host_ipc", "topology_spread", "required_topology", "preferred_topology"},
		kind: jobs.Train,
	})
}

// ModifyPlan decides what the plan does to the job as every job resource does (plan: Trainer's
// API fixes all but the TrainJob's own labels, annotations and suspend, so every other change
// replaces it), refuses a name JobSet would refuse on the job's runtime (checkNameOnRuntime),
// plans the grace its runtime needs, keeps in the plan of an update the status it leaves alone
// (planStatus) and warns when the job cannot be placed on the cluster's nodes (checkPlanned).
func (r *trainJobResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	moved := planMoved(ctx, req, resp)
	if unchanged(req) && !moved {
		return
	}
	p := r.plan(ctx, req, resp)
	if moved {
		p.forcing = append(p.forcing, "the moved block")
	}
	// One model for every check: the runtime is read once.
	if next, ok := p.next.(*trainJobModel); ok {
		prior, _ := p.prior.(*trainJobModel)
		r.checkPlanned(ctx, req, resp, p)
		r.checkNameOnRuntime(ctx, resp, next, prior)
		r.warnRuntimeStops(ctx, req, resp, next)
		r.planGraceOnRuntime(ctx, req, resp, next, prior)
		if prior != nil && !prior.SensitiveEnvWONames.Equal(next.SensitiveEnvWONames) {
			// The trainer takes each write-only variable by name, which Trainer's API fixes.
			p.forcing = append(p.forcing, "sensitive_env_wo_names")
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("sensitive_env_wo_names"))
		}
	}
	guardRunning(ctx, req, resp, p)
	warnNewWriteOnlyVersion(resp, p)
	warnDestroyedTraining(ctx, req, resp, p)
	warnReplacedTraining(ctx, resp, p)
	planStatus(ctx, resp, p)
}

func (m *trainJobModel) spec(ctx context.Context) (jobs.Spec, diag.Diagnostics) {
	pod, diags := podOptionsOf(ctx, m)
	if pod.WriteOnlyEnv != nil {
		pod.WriteOnlyEnv.Names = stringList(ctx, m.SensitiveEnvWONames, &diags)
	}
	// The shared labels and annotations are the object's; the pods' are their own attributes.
	labels, annotations := pod.Labels, pod.Annotations
	pod.Labels, pod.Annotations = nil, nil
	diags.Append(m.PodLabels.ElementsAs(ctx, &pod.Labels, true)...)
	diags.Append(m.PodAnnotations.ElementsAs(ctx, &pod.Annotations, true)...)
	spec := jobs.TrainJobSpec{
		Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString(), Pod: pod, Labels: labels, Annotations: annotations,
		Runtime:               jobs.RuntimeRef{Name: m.Runtime.ValueString(), Kind: m.RuntimeKind.ValueString()},
		Command:               stringList(ctx, m.Command, &diags),
		Args:                  stringList(ctx, m.Args, &diags),
		Nodes:                 int32(m.NumNodes.ValueInt64()),
		ProcsPerNode:          int32(m.ProcessesPerNode.ValueInt64()),
		Suspend:               m.Suspend.ValueBool(),
		QueueName:             m.QueueName.ValueString(),
		WorkloadPriorityClass: m.WorkloadPriorityClass.ValueString(),
		RuntimeJobs:           m.runtimeJobs,
	}
	if !m.ActiveDeadlineSeconds.IsNull() {
		spec.ActiveDeadlineSeconds = ptr.To(m.ActiveDeadlineSeconds.ValueInt64())
	}
	return spec, diags
}

func (m *trainJobModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s, err := jobs.ReadTrainJob(obj)
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Error reading TrainJob", err.Error())}
	}
	imported := m.imported()
	var priorPodLabels, priorPodAnnotations map[string]string
	_ = m.PodLabels.ElementsAs(ctx, &priorPodLabels, true)
	_ = m.PodAnnotations.ElementsAs(ctx, &priorPodAnnotations, true)
	// The pods' labels and annotations are their own attributes; the shared ones, the object's.
	// A job of an earlier release has its labels on its pods too: they stay out of pod_labels
	// until the configuration has some.
	var diags diag.Diagnostics
	m.PodLabels = optionalMap(ctx, usersKeys(s.Pod.Labels, priorPodLabels, imported), &diags)
	m.PodAnnotations = optionalMap(ctx, usersKeys(s.Pod.Annotations, priorPodAnnotations, imported), &diags)
	if imported && jobs.CopiedPodMetadata(obj, s) {
		m.PodLabels, m.PodAnnotations = types.MapNull(types.StringType), types.MapNull(types.StringType)
	}
	pod := s.Pod
	pod.Labels, pod.Annotations = s.Labels, s.Annotations
	diags.Append(setPodOf(ctx, m, pod)...)
	m.SensitiveEnvWONames = types.ListNull(types.StringType)
	if w := s.Pod.WriteOnlyEnv; w != nil && len(w.Names) > 0 {
		m.SensitiveEnvWONames = stringListValue(w.Names)
	}
	m.Image = optionalString(s.Pod.Image)
	m.Runtime = types.StringValue(s.Runtime.Name)
	m.RuntimeKind = types.StringValue(s.Runtime.Kind)
	m.Command = optionalList(ctx, s.Command, &diags)
	m.Args = optionalList(ctx, s.Args, &diags)
	m.NumNodes = types.Int64Value(int64(s.Nodes))
	m.ProcessesPerNode = types.Int64Null()
	if s.ProcsPerNode > 0 {
		m.ProcessesPerNode = types.Int64Value(int64(s.ProcsPerNode))
	}
	m.Suspend = types.BoolValue(s.Suspend)
	m.QueueName = optionalString(s.QueueName)
	m.WorkloadPriorityClass = optionalString(s.WorkloadPriorityClass)
	m.ActiveDeadlineSeconds = types.Int64Null()
	if s.ActiveDeadlineSeconds != nil {
		m.ActiveDeadlineSeconds = types.Int64Value(*s.ActiveDeadlineSeconds)
	}
	return diags
}

// resolve reads the job's runtime before anything is created: a runtime that does not exist
// fails the apply on the runtime attribute, naming those there are (Trainer's webhook would
// refuse the job anyway, in its words); one that does gives its replicated jobs, which the
// runtime patch places, and the longest name JobSet takes (checkName: a runtime made by the
// same apply could not be read at plan).
func (m *trainJobModel) resolve(ctx context.Context, c *kube.Client, diags *diag.Diagnostics) bool {
	kind, name := m.RuntimeKind.ValueString(), m.Runtime.ValueString()
	t, where, _ := m.runtimeTarget()
	if !awaitServed(ctx, c, t.GVR, path.Root("runtime"), diags) {
		return false
	}
	// A runtime this apply makes beside the job, without a reference, is waited for.
	var obj *unstructured.Unstructured
	_, err := awaitNeed(ctx, func(ctx context.Context) (bool, error) {
		var err error
		obj, err = m.runtime(ctx, c)
		return obj != nil, err
	})
	if interruptedWaiting(path.Root("runtime"), t.String(), err, diags) {
		return false
	}
	if err != nil {
		diags.AddAttributeError(path.Root("runtime"), "Error reading "+t.String(), fmt.Sprintf("%v (is Kubeflow Trainer installed?). Nothing was created.", err))
		return false
	}
	if obj != nil {
		if !m.graceOnRuntime(ctx, obj, diags) {
			return false
		}
		if err := m.checkName(ctx, obj); err != nil {
			diags.AddAttributeError(path.Root("name"), "TrainJob name too long for its runtime", err.Error()+". Nothing was created.")
			return false
		}
		return true
	}
	names, err := c.Names(ctx, t.GVR, t.Namespace)
	there := "none"
	if err != nil {
		there = "they cannot be listed: " + err.Error()
	} else if len(names) > 0 {
		there = strings.Join(names, ", ")
	}
	diags.AddAttributeError(path.Root("runtime"), "No "+kind+" "+name,
		fmt.Sprintf("runtime names %s %q, which %s does not have (%ss there: %s).%s Nothing was created.", kind, name, where, kind, there, waitedForIt))
	return false
}

// checkName says whether JobSet will take the JobSet Trainer makes of the job on runtime: its
// pods' names are the job's name and the runtime's replicated jobs' (jobs.CheckTrainJobName).
// What cannot be known yet is left to the apply.
func (m *trainJobModel) checkName(ctx context.Context, runtime *unstructured.Unstructured) error {
	spec, diags := m.spec(ctx)
	if diags.HasError() || m.Name.IsUnknown() || m.NumNodes.IsUnknown() {
		return nil
	}
	// What cannot be built or read here, the apply reports in its own words.
	if obj, _, err := spec.Build(); err == nil {
		if roles, err := jobs.TrainJobRoles(obj, runtime); err == nil {
			return jobs.CheckTrainJobName(obj.GetName(), roles)
		}
	}
	return nil
}

// checkNameOnRuntime refuses, at plan, a job to be created whose name JobSet would refuse on its
// runtime as the cluster has it (checkName), before Trainer has made a TrainJob that cannot run.
// Without a cluster, or with a runtime this apply makes, create checks it before anything is
// made.
func (r *trainJobResource) checkNameOnRuntime(ctx context.Context, resp *resource.ModifyPlanResponse, plan, state *trainJobModel) {
	if r.client == nil {
		return
	}
	if state != nil && plan.Name.Equal(state.Name) && plan.NumNodes.Equal(state.NumNodes) && plan.Runtime.Equal(state.Runtime) &&
		plan.RuntimeKind.Equal(state.RuntimeKind) {
		return
	}
	runtime, err := plan.runtime(ctx, r.client)
	if err != nil || runtime == nil {
		return
	}
	if err := plan.checkName(ctx, runtime); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "TrainJob name too long for its runtime", err.Error()+".")
	}
}

// ValidateConfig checks queueing at plan time.
func (r *trainJobResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateQueueing(ctx, req.Config, &resp.Diagnostics)
}
