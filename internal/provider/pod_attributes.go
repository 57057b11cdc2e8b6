package provider

import (
	"context"
	"maps"
	"math"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// podModel holds the pod-level attributes every job resource shares, under the same names.
type podModel struct {
	// firstRead: the read that fills the model is the first after an import (see imported).
	firstRead bool

	Image              types.String `tfsdk:"image"`
	GPUs               types.Int64  `tfsdk:"gpus"`
	GPUResourceName    types.String `tfsdk:"gpu_resource_name"`
	ExtendedResources  types.Map    `tfsdk:"extended_resources"`
	CPU                types.String `tfsdk:"cpu"`
	Memory             types.String `tfsdk:"memory"`
	Env                types.Map    `tfsdk:"env"`
	SensitiveEnv       types.Map    `tfsdk:"sensitive_env"`
	EnvSecret          types.Map    `tfsdk:"env_secret"`
	Labels             types.Map    `tfsdk:"labels"`
	Annotations        types.Map    `tfsdk:"annotations"`
	NodeSelector       types.Map    `tfsdk:"node_selector"`
	Tolerations        types.List   `tfsdk:"tolerations"`
	ServiceAccountName types.String `tfsdk:"service_account_name"`
	ImagePullSecrets   types.List   `tfsdk:"image_pull_secrets"`
	DataVolumes        types.List   `tfsdk:"data_volumes"`
	ShmSize            types.String `tfsdk:"shm_size"`
	SecurityContext    types.Object `tfsdk:"security_context"`
	CPULimit           types.Bool   `tfsdk:"cpu_limit"`
	GracePeriod        types.Int64  `tfsdk:"termination_grace_period_seconds"`
	Checkpoint         types.Object `tfsdk:"checkpoint"`
}

func (m *podModel) pod() *podModel { return m }

// podTemplateModel are the pod attributes of the resources whose pod templates the provider
// writes whole: every job kind but the TrainJob (whose pods are its runtime's, which Trainer
// patches with a few fields only), and the runtime.
type podTemplateModel struct {
	EnvFromSecrets    types.List   `tfsdk:"env_from_secrets"`
	PriorityClassName types.String `tfsdk:"priority_class_name"`
	ImagePullPolicy   types.String `tfsdk:"image_pull_policy"`
	SchedulerName     types.String `tfsdk:"scheduler_name"`
	HostNetwork       types.Bool   `tfsdk:"host_network"`
	HostIPC           types.Bool   `tfsdk:"host_ipc"`
	TopologySpread    types.List   `tfsdk:"topology_spread"`
	PodPatch          types.Map    `tfsdk:"pod_patch"`
}

func (m *podTemplateModel) podTemplate() *podTemplateModel { return m }

// rolesModel is the roles of the job kinds with roles of their own (a runtime's replicated jobs
// are set by its framework's attributes; a TrainJob's are its runtime's).
type rolesModel struct {
	Roles types.Map `tfsdk:"roles"`
}

func (m *rolesModel) roles() *rolesModel { return m }

// tasModel is Kueue's Topology Aware Scheduling of the kinds Kueue queues with it.
type tasModel struct {
	RequiredTopology  types.Map `tfsdk:"required_topology"`
	PreferredTopology types.Map `tfsdk:"preferred_topology"`
}

func (m *tasModel) tas() *tasModel { return m }

// podParts is a model with pod attributes, and of the other groups those its kind has.
type podParts interface{ pod() *podModel }

type withPodTemplate interface{ podTemplate() *podTemplateModel }
type withRoles interface{ roles() *rolesModel }
type withTAS interface{ tas() *tasModel }

// podOptionsOf converts every pod attribute the model has into the plain spec.
func podOptionsOf(ctx context.Context, m podParts) (jobs.PodOptions, diag.Diagnostics) {
	o, diags := m.pod().podOptions(ctx)
	if t, ok := m.(withPodTemplate); ok {
		t.podTemplate().addTo(ctx, &o, &diags)
	}
	if w, ok := m.(withWriteOnlyEnv); ok {
		if j, ok := m.(interface{ job() *jobFields }); ok {
			w.writeOnlyEnv().addTo(j.job().Name.ValueString(), &o)
		}
	}
	if r, ok := m.(withRoles); ok {
		o.Roles = roleOptions(ctx, r.roles().Roles, &diags)
	}
	if t, ok := m.(withTAS); ok {
		diags.Append(t.tas().RequiredTopology.ElementsAs(ctx, &o.RequiredTopology, true)...)
		diags.Append(t.tas().PreferredTopology.ElementsAs(ctx, &o.PreferredTopology, true)...)
	}
	return o, diags
}

// setPodOf sets the model's pod attributes from what the cluster holds (setFromPodOptions); its
// roles, pod patches and topology are read with the job (readRolesAndPatches).
func setPodOf(ctx context.Context, m podParts, o jobs.PodOptions) diag.Diagnostics {
	diags := m.pod().setFromPodOptions(ctx, o)
	if t, ok := m.(withPodTemplate); ok {
		t.podTemplate().setFrom(ctx, o, &diags)
	}
	if w, ok := m.(withWriteOnlyEnv); ok {
		w.writeOnlyEnv().setFrom(o)
	}
	return diags
}

// addTo converts the pod template's attributes into o.
func (m podTemplateModel) addTo(ctx context.Context, o *jobs.PodOptions, diags *diag.Diagnostics) {
	o.PriorityClassName = m.PriorityClassName.ValueString()
	o.ImagePullPolicy = corev1.PullPolicy(m.ImagePullPolicy.ValueString())
	o.SchedulerName = m.SchedulerName.ValueString()
	o.HostNetwork, o.HostIPC = m.HostNetwork.ValueBool(), m.HostIPC.ValueBool()
	o.Spread = spreadOf(ctx, m.TopologySpread, diags)
	diags.Append(m.PodPatch.ElementsAs(ctx, &o.Patches, true)...)
	diags.Append(m.EnvFromSecrets.ElementsAs(ctx, &o.EnvFromSecrets, true)...)
}

// setFrom sets the pod template's attributes from what the cluster holds; the pod patches are
// read with the roles (readRolesAndPatches).
func (m *podTemplateModel) setFrom(ctx context.Context, o jobs.PodOptions, diags *diag.Diagnostics) {
	m.PriorityClassName = optionalString(o.PriorityClassName)
	m.ImagePullPolicy = optionalString(string(o.ImagePullPolicy))
	m.EnvFromSecrets = optionalList(ctx, o.EnvFromSecrets, diags)
	m.SchedulerName = optionalString(o.SchedulerName)
	m.HostNetwork, m.HostIPC = types.BoolValue(o.HostNetwork), types.BoolValue(o.HostIPC)
	m.TopologySpread = spreadValue(o.Spread)
}

// secretKeyModel is one env_secret entry: a key of a Secret in the job's namespace.
type secretKeyModel struct {
	Secret types.String `tfsdk:"secret"`
	Key    types.String `tfsdk:"key"`
}

var secretKeyType = types.ObjectType{AttrTypes: map[string]attr.Type{"secret": types.StringType, "key": types.StringType}}

// metadataDoc says, in the labels' and annotations' descriptions, what objects they are put on
// and what changing them does.
type metadataDoc struct{ on, change string }

// jobMetadata is a Kubeflow job's or a Framework's: the labels and annotations are the job
// object's and its pod templates'.
func jobMetadata(role string) metadataDoc {
	return metadataDoc{on: "the job object and of " + role, change: "Changing them updates the job object and its pod templates in place: pods made from then on carry them, " +
		"running pods keep theirs (the provider is not allowed to patch pods)."}
}

// podAttributes are the shared attributes; all of them but the labels and annotations are baked
// into the pods, so changing any of them replaces the job. role names the pods they apply to,
// and meta what the labels and annotations go to, for the descriptions.
func podAttributes(role string, meta metadataDoc, stops stopping) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"image": schema.StringAttribute{Required: true, Validators: []validator.String{nonBlankRule},
			MarkdownDescription: "Container image of " + role + "."},
		"gpus": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(0),
			Validators:          []validator.Int64{int64validator.Between(0, 64)},
			MarkdownDescription: "GPUs per worker, set as a limit of `gpu_resource_name`. Default 0."},
		"gpu_resource_name": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.DefaultGPUResource),
			Validators:          []validator.String{gpuResourceRule},
			MarkdownDescription: "Extended resource the GPUs are requested as. Default `" + jobs.DefaultGPUResource + "`."},
		"extended_resources": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{mapvalidator.KeysAre(extendedResourceRule), mapvalidator.ValueStringsAre(wholeCountRule), notTheGPUResource{}},
			MarkdownDescription: "Other extended resources per worker beside the GPUs, by name, in whole devices, set as limits (an extended " +
				"resource's request is its limit): RDMA or InfiniBand devices (`rdma/hca`), AWS EFA (`vpc.amazonaws.com/efa`). The plan's " +
				"placement check counts them against the nodes' allocatable. Changing them replaces the job."},
		"cpu": schema.StringAttribute{Optional: true, Validators: []validator.String{quantityRule},
			MarkdownDescription: "CPU per worker as a Kubernetes quantity (`4`, `500m`), set as request and limit."},
		"memory": schema.StringAttribute{Optional: true, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Memory per worker as a Kubernetes quantity (`16Gi`), set as request and limit."},
		"env": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{mapvalidator.KeysAre(envNameRule)},
			MarkdownDescription: "Environment variables of " + role + "."},
		"sensitive_env": schema.MapAttribute{ElementType: types.StringType, Optional: true, Sensitive: true, Validators: []validator.Map{mapvalidator.KeysAre(envNameRule), distinctKeys{"env", "env_secret"}},
			MarkdownDescription: "Environment variables of " + role + " whose values must not show: Terraform hides them in plans and logs. " +
				"They are still stored in the Terraform state and in the job object, as any inline value is; a credential belongs in a Secret, " +
				"named by `env_secret` or `env_from_secrets`, whose value never passes through Terraform, or in `sensitive_env_wo` (Terraform 1.11 " +
				"and later; the job resources but `training_train_job`), which is in neither plan nor state. An import of a job this provider " +
				"did not make reads every inline variable here, so that no value shows in clear; a variable moved between `env` and " +
				"`sensitive_env` with the same value changes the job in place and touches no pod."},
		"env_secret": schema.MapNestedAttribute{Optional: true, Validators: []validator.Map{mapvalidator.KeysAre(envNameRule), distinctKeys{"env", "sensitive_env"}},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"secret": schema.StringAttribute{Required: true, Validators: []validator.String{objectNameRule},
					MarkdownDescription: "Name of the Secret, in the job's namespace."},
				"key": schema.StringAttribute{Required: true, Validators: []validator.String{secretKeyRule},
					MarkdownDescription: "Key in the Secret."},
			}},
			MarkdownDescription: "Environment variables of " + role + " taken from Secrets (`valueFrom.secretKeyRef`), by variable name: " +
				"`{ WANDB_API_KEY = { secret = \"wandb\", key = \"api-key\" } }`. Only the Secret's name and key are in the plan, the state " +
				"and the job object; the value never passes through Terraform."},
		"env_from_secrets": schema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.List{listvalidator.ValueStringsAre(objectNameRule)},
			MarkdownDescription: "Secrets in the job's namespace whose every key becomes an environment variable of " + role + " (`envFrom`)."},
		"labels": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.KeysAre(labelKeyRule, jobLabelKeyRule), mapvalidator.ValueStringsAre(labelValueRule)},
			MarkdownDescription: "Labels of " + meta.on + ". " + meta.change +
				" Only these keys are Terraform's: labels others add are left alone and not shown as changes."},
		"annotations": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.KeysAre(labelKeyRule)},
			MarkdownDescription: "Annotations of " + meta.on + ". " + meta.change +
				" Only these keys are Terraform's: annotations others add are left alone and not shown as changes."},
		"node_selector": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{mapvalidator.KeysAre(labelKeyRule), mapvalidator.ValueStringsAre(labelValueRule)},
			MarkdownDescription: "Node labels " + role + " must run on."},
		"tolerations": schema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.List{listvalidator.ValueStringsAre(tolerationRule)},
			MarkdownDescription: "Taints " + role + " tolerate, as strings: a bare key (`nvidia.com/gpu`) tolerates " +
				"every taint with that key, `all` tolerates every taint (a plan warns: that includes cordoned and unreachable nodes), and " +
				"`key=value:Effect`, `key:Effect` and `key=value` are accepted too, as are the longer forms `key[=value]:Effect:Operator[:seconds]` (the form a refresh writes a toleration with seconds in) " +
				"and `key=value:Effect,Operator`. Effects are `NoSchedule`, `PreferNoSchedule` and `NoExecute`, operators `Equal` and `Exists`. " +
				"A malformed entry, `All` (for `all`), or one the API server would refuse (a value with `Exists`, seconds without `NoExecute`) is a plan-time error."},
		"priority_class_name": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "PriorityClass of " + role + "."},
		"service_account_name": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "ServiceAccount " + role + " run as."},
		"image_pull_secrets": schema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.List{listvalidator.ValueStringsAre(objectNameRule)},
			MarkdownDescription: "Secrets to pull the image with."},
		"image_pull_policy": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf(string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever))},
			MarkdownDescription: "`Always`, `IfNotPresent` or `Never`; unset leaves Kubernetes' default."},
		"data_volumes": schema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.List{listvalidator.ValueStringsAre(dataVolumeRule)},
			MarkdownDescription: "PersistentVolumeClaims to mount, as `claim-name:/mount/path`."},
		"security_context": securityAttribute(role),
		"cpu_limit": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true), MarkdownDescription: "Whether `cpu` (and a role's `cpu`) is also the CPU limit. Default true (request and limit). " +
			"`false` sets it as the request (`resources.requests.cpu`) alone: the pods are scheduled by it and may use idle CPU beyond it, " +
			"so that data loaders are not throttled by the CFS quota. Memory and extended resources keep their limits."},
		"scheduler_name": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "Scheduler of " + role + " (`spec.schedulerName`): Volcano, the scheduler-plugins' coscheduling scheduler or " +
				"another one the cluster runs; unset is the cluster's default scheduler. A companion pod (etcd, TensorBoard) keeps the default."},
		"host_network": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false), MarkdownDescription: "Run " + role + " in their nodes' network namespace (`spec.hostNetwork`), as RDMA over RoCE and some " +
			"InfiniBand set-ups need; `dnsPolicy` becomes `ClusterFirstWithHostNet`, so that the pods still resolve the cluster's " +
			"Services. Their ports are then their nodes' ports: two pods of the job on one node must not share one. Default false. " +
			"Pod Security `baseline` and `restricted` refuse it."},
		"host_ipc": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false), MarkdownDescription: "Share their nodes' IPC namespace with " + role + " (`spec.hostIPC`), for NCCL's or MPI's shared memory " +
			"between pods of one node. Default false. Pod Security `baseline` and `restricted` refuse it."},
		"termination_grace_period_seconds": schema.Int64Attribute{Optional: true, Computed: true,
			PlanModifiers: []planmodifier.Int64{checkpointGrace{stops}},
			Validators:    []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Seconds " + role + " are given to stop after SIGTERM (`spec.terminationGracePeriodSeconds`), for a last " +
				"checkpoint. Unset, it is what `checkpoint` needs, and without a checkpoint Kubernetes' 30."},
		"checkpoint": checkpointAttribute(role, stops),
		"topology_spread": schema.ListNestedAttribute{Optional: true, Validators: []validator.List{distinctSpread{}},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"topology_key": schema.StringAttribute{Required: true, Validators: []validator.String{labelKeyRule},
					MarkdownDescription: "Node label whose values are the domains: `topology.kubernetes.io/zone`, a rack label, `kubernetes.io/hostname`."},
				"max_skew": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(1),
					Validators:          []validator.Int64{int64validator.Between(1, math.MaxInt32)},
					MarkdownDescription: "How many more of a role's pods one domain may hold than another. Default 1."},
				"when_unsatisfiable": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(string(corev1.DoNotSchedule)),
					Validators:          []validator.String{stringvalidator.OneOf(string(corev1.DoNotSchedule), string(corev1.ScheduleAnyway))},
					MarkdownDescription: "`DoNotSchedule` (default: a pod waits rather than skew the spread) or `ScheduleAnyway` (a preference)."},
			}},
			MarkdownDescription: "Spread each role's pods over the domains of a topology (`spec.topologySpreadConstraints`): every role of " +
				"the job gets these constraints, each selecting that role's own pods of this job by its operator's labels, so that other jobs " +
				"and the job's other roles do not count. For workers across racks: `[{ topology_key = \"example.com/rack\" }]`. The same key " +
				"twice with the same `when_unsatisfiable` is a plan error, as the API server would refuse it."},
		"pod_patch":          podPatchAttribute(),
		"roles":              rolesAttribute(),
		"required_topology":  topologyAttribute(true),
		"preferred_topology": topologyAttribute(false),
		"shm_size": schema.StringAttribute{Optional: true, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Size of a memory-backed `/dev/shm` for " + role + " (PyTorch data loaders need more than the default 64Mi)."},
	}
}

// podOptions converts the attributes every resource with pods has into the plain spec (see
// podOptionsOf for the rest). Values were validated at plan time, so parse errors here can only
// come from unknown values, which are reported.
func (m podModel) podOptions(ctx context.Context) (jobs.PodOptions, diag.Diagnostics) {
	var diags diag.Diagnostics
	o := jobs.PodOptions{
		Image:              m.Image.ValueString(),
		GPUs:               m.GPUs.ValueInt64(),
		GPUResource:        m.GPUResourceName.ValueString(),
		CPU:                m.CPU.ValueString(),
		Memory:             m.Memory.ValueString(),
		ServiceAccountName: m.ServiceAccountName.ValueString(),
		ShmSize:            m.ShmSize.ValueString(),
		NoCPULimit:         !m.CPULimit.IsNull() && !m.CPULimit.ValueBool(),

		TerminationGracePeriod: m.GracePeriod.ValueInt64Pointer(),
	}
	o.Checkpoint = checkpointOf(ctx, m.Checkpoint, &diags)
	o.Security = security(ctx, m.SecurityContext, &diags)
	var sensitive map[string]string
	diags.Append(m.ExtendedResources.ElementsAs(ctx, &o.ExtendedResources, true)...)
	diags.Append(m.Env.ElementsAs(ctx, &o.Env, true)...)
	diags.Append(m.SensitiveEnv.ElementsAs(ctx, &sensitive, true)...)
	o.Env = mergeMaps(o.Env, sensitive)
	o.SensitiveEnv = slices.Sorted(maps.Keys(sensitive))
	var secretEnv map[string]secretKeyModel
	diags.Append(m.EnvSecret.ElementsAs(ctx, &secretEnv, true)...)
	for name, ref := range secretEnv {
		if o.SecretEnv == nil {
			o.SecretEnv = map[string]jobs.SecretKey{}
		}
		o.SecretEnv[name] = jobs.SecretKey{Secret: ref.Secret.ValueString(), Key: ref.Key.ValueString()}
	}
	diags.Append(m.Labels.ElementsAs(ctx, &o.Labels, true)...)
	diags.Append(m.Annotations.ElementsAs(ctx, &o.Annotations, true)...)
	diags.Append(m.NodeSelector.ElementsAs(ctx, &o.NodeSelector, true)...)
	diags.Append(m.ImagePullSecrets.ElementsAs(ctx, &o.ImagePullSecrets, true)...)

	o.Tolerations = tolerationsOf(ctx, m.Tolerations, path.Root("tolerations"), &diags)
	var volumes []string
	diags.Append(m.DataVolumes.ElementsAs(ctx, &volumes, true)...)
	for i, s := range volumes {
		v, err := jobs.ParseDataVolume(s)
		if err != nil {
			diags.AddAttributeError(path.Root("data_volumes").AtListIndex(i), "Invalid data volume", err.Error())
			continue
		}
		o.DataVolumes = append(o.DataVolumes, v)
	}
	return o, diags
}

// imported says whether the model is read for the first time after an import, or for a list
// resource's result (markImported): it holds no prior state to keep the words of.
func (m *podModel) imported() bool { return m.firstRead }

// markImported marks the model as read for the first time after an import.
func (m *podModel) markImported() { m.firstRead = true }

// perGPUDefault plans an unset count (MPI slots, torchelastic processes per worker) as one per
// GPU of the worker, at least one, so the plan shows the value the job will get.
type perGPUDefault struct{}

func (perGPUDefault) Description(context.Context) string {
	return "defaults to the GPUs per worker, at least 1"
}
func (d perGPUDefault) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (perGPUDefault) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	var gpus types.Int64
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("gpus"), &gpus)...)
	if gpus.IsUnknown() {
		return
	}
	resp.PlanValue = types.Int64Value(int64(jobs.DefaultSlots(gpus.ValueInt64())))
}
