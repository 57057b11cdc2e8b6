package provider

import (
	"cmp"
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// podModel holds the pod-level attributes every job resource shares, under the same names.
type podModel struct {
	// firstRead: the read that fills the model is the first after an import (see imported).
	firstRead bool

	Image              types.String      `tfsdk:"image"`
	GPUs               types.Int64       `tfsdk:"gpus"`
	GPUResourceName    types.String      `tfsdk:"gpu_resource_name"`
	ExtendedResources  types.Map         `tfsdk:"extended_resources"`
	CPU                types.String      `tfsdk:"cpu"`
	Memory             types.String      `tfsdk:"memory"`
	Env                types.Map         `tfsdk:"env"`
	SensitiveEnv       types.Map         `tfsdk:"sensitive_env"`
	EnvSecret          types.Map         `tfsdk:"env_secret"`
	EnvFromSecrets     types.List        `tfsdk:"env_from_secrets"`
	Labels             types.Map         `tfsdk:"labels"`
	Annotations        types.Map         `tfsdk:"annotations"`
	NodeSelector       types.Map         `tfsdk:"node_selector"`
	Tolerations        types.List        `tfsdk:"tolerations"`
	Toleration         []tolerationModel `tfsdk:"toleration"`
	PriorityClassName  types.String      `tfsdk:"priority_class_name"`
	ServiceAccountName types.String      `tfsdk:"service_account_name"`
	ImagePullSecrets   types.List        `tfsdk:"image_pull_secrets"`
	ImagePullPolicy    types.String      `tfsdk:"image_pull_policy"`
	DataVolumes        types.List        `tfsdk:"data_volumes"`
	ShmSize            types.String      `tfsdk:"shm_size"`
	SecurityContext    types.Object      `tfsdk:"security_context"`
	PodPatch           types.Map         `tfsdk:"pod_patch"`
	Roles              types.Map         `tfsdk:"roles"`
}

func (m *podModel) pod() *podModel { return m }

// secretKeyModel is one env_secret entry: a key of a Secret in the job's namespace.
type secretKeyModel struct {
	Secret types.String `tfsdk:"secret"`
	Key    types.String `tfsdk:"key"`
}

var secretKeyType = types.ObjectType{AttrTypes: map[string]attr.Type{"secret": types.StringType, "key": types.StringType}}

// metadataDoc says, in the labels' and annotations' descriptions, what objects they are put on
// and what changing them does.
type metadataDoc struct{ on, change string }

// jobMetadata is a Kubeflow job's or a Framework's: their operators pass label and annotation
// changes on to the pods they run.
func jobMetadata(role string) metadataDoc {
	return metadataDoc{on: "the job object and of " + role, change: "Changing them updates the job object, its pod templates and its running pods in place."}
}

// podAttributes are the shared attributes; all of them but the labels and annotations are baked
// into the pods, so changing any of them replaces the job. role names the pods they apply to,
// and meta what the labels and annotations go to, for the descriptions.
func podAttributes(role string, meta metadataDoc) map[string]schema.Attribute {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceMap := []planmodifier.Map{mapplanmodifier.RequiresReplace()}
	replaceList := []planmodifier.List{listplanmodifier.RequiresReplace()}
	return map[string]schema.Attribute{
		"image": schema.StringAttribute{Required: true, PlanModifiers: replaceString,
			Validators:          []validator.String{nonBlankRule},
			MarkdownDescription: "Container image of " + role + " (Arena: `--image`)."},
		"gpus": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(0),
			PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			Validators:          []validator.Int64{int64validator.Between(0, 64)},
			MarkdownDescription: "GPUs per worker, set as a limit of `gpu_resource_name` (Arena: `--gpus`). Default 0."},
		"gpu_resource_name": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.DefaultGPUResource),
			PlanModifiers: replaceString, Validators: []validator.String{gpuResourceRule},
			MarkdownDescription: "Extended resource the GPUs are requested as. Default `" + jobs.DefaultGPUResource + "`."},
		"extended_resources": schema.MapAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceMap,
			Validators: []validator.Map{mapvalidator.KeysAre(extendedResourceRule), mapvalidator.ValueStringsAre(wholeCountRule), notTheGPUResource{}},
			MarkdownDescription: "Other extended resources per worker beside the GPUs, by name, in whole devices, set as limits (an extended " +
				"resource's request is its limit): RDMA or InfiniBand devices (`rdma/hca`), AWS EFA (`vpc.amazonaws.com/efa`). The plan's " +
				"placement check counts them against the nodes' allocatable. Changing them replaces the job."},
		"cpu": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "CPU per worker as a Kubernetes quantity (`4`, `500m`), set as request and limit (Arena: `--cpu`)."},
		"memory": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Memory per worker as a Kubernetes quantity (`16Gi`), set as request and limit (Arena: `--memory`)."},
		"env": schema.MapAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceMap,
			Validators:          []validator.Map{mapvalidator.KeysAre(envNameRule)},
			MarkdownDescription: "Environment variables of " + role + " (Arena: `--env`)."},
		"sensitive_env": schema.MapAttribute{ElementType: types.StringType, Optional: true, Sensitive: true, PlanModifiers: replaceMap,
			Validators: []validator.Map{mapvalidator.KeysAre(envNameRule), distinctKeys{"env", "env_secret"}},
			MarkdownDescription: "Environment variables of " + role + " whose values must not show: Terraform hides them in plans and logs. " +
				"They are still stored in the Terraform state and in the job object, as any inline value is; a credential belongs in a Secret, " +
				"named by `env_secret` or `env_from_secrets`, whose value never passes through Terraform."},
		"env_secret": schema.MapNestedAttribute{Optional: true, PlanModifiers: replaceMap,
			Validators: []validator.Map{mapvalidator.KeysAre(envNameRule), distinctKeys{"env", "sensitive_env"}},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"secret": schema.StringAttribute{Required: true, Validators: []validator.String{objectNameRule},
					MarkdownDescription: "Name of the Secret, in the job's namespace."},
				"key": schema.StringAttribute{Required: true, Validators: []validator.String{secretKeyRule},
					MarkdownDescription: "Key in the Secret."},
			}},
			MarkdownDescription: "Environment variables of " + role + " taken from Secrets (`valueFrom.secretKeyRef`), by variable name: " +
				"`{ WANDB_API_KEY = { secret = \"wandb\", key = \"api-key\" } }`. Only the Secret's name and key are in the plan, the state " +
				"and the job object; the value never passes through Terraform."},
		"env_from_secrets": schema.ListAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceList,
			Validators:          []validator.List{listvalidator.ValueStringsAre(objectNameRule)},
			MarkdownDescription: "Secrets in the job's namespace whose every key becomes an environment variable of " + role + " (`envFrom`)."},
		"labels": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.KeysAre(labelKeyRule), mapvalidator.ValueStringsAre(labelValueRule)},
			MarkdownDescription: "Labels of " + meta.on + ". " + meta.change +
				" Only these keys are Terraform's: labels others add are left alone and not shown as changes."},
		"annotations": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.KeysAre(labelKeyRule)},
			MarkdownDescription: "Annotations of " + meta.on + " (Arena: `--annotation`). " + meta.change +
				" Only these keys are Terraform's: annotations others add are left alone and not shown as changes."},
		"node_selector": schema.MapAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceMap,
			Validators:          []validator.Map{mapvalidator.KeysAre(labelKeyRule), mapvalidator.ValueStringsAre(labelValueRule)},
			MarkdownDescription: "Node labels " + role + " must run on (Arena: `--selector`)."},
		"tolerations": schema.ListAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: []planmodifier.List{tolerationsReplace{}},
			Validators: []validator.List{listvalidator.ValueStringsAre(tolerationRule)},
			MarkdownDescription: "Taints " + role + " tolerate, in Arena's `--toleration` grammar: a bare key (`ssd_node`) tolerates " +
				"every taint with that key, `all` tolerates every taint (a plan warns: that includes cordoned and unreachable nodes), and " +
				"`key=value:Effect`, `key:Effect` and `key=value` are accepted too, as are Arena's longer forms `key[=value]:Effect:Operator[:seconds]` " +
				"and `key=value:Effect,Operator`. Effects are `NoSchedule`, `PreferNoSchedule` and `NoExecute`, operators `Equal` and `Exists`. " +
				"A malformed entry, `All` (for `all`), or one the API server would refuse (a value with `Exists`, seconds without `NoExecute`) is a plan-time error."},
		"priority_class_name": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "PriorityClass of " + role + " (Arena: `--priority`)."},
		"service_account_name": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "ServiceAccount " + role + " run as."},
		"image_pull_secrets": schema.ListAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceList,
			Validators:          []validator.List{listvalidator.ValueStringsAre(objectNameRule)},
			MarkdownDescription: "Secrets to pull the image with (Arena: `--image-pull-secret`)."},
		"image_pull_policy": schema.StringAttribute{Optional: true, PlanModifiers: replaceString,
			Validators:          []validator.String{stringvalidator.OneOf(string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever))},
			MarkdownDescription: "`Always`, `IfNotPresent` or `Never`; unset leaves Kubernetes' default."},
		"data_volumes": schema.ListAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: replaceList,
			Validators:          []validator.List{listvalidator.ValueStringsAre(dataVolumeRule)},
			MarkdownDescription: "PersistentVolumeClaims to mount, as `claim-name:/mount/path` (Arena: `--data`)."},
		"security_context": securityAttribute(role),
		"pod_patch":        podPatchAttribute(),
		"roles":            rolesAttribute(),
		"shm_size": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Size of a memory-backed `/dev/shm` for " + role + " (PyTorch data loaders need more than the default 64Mi)."},
	}
}

// podOptions converts the shared attributes into the plain spec. Values were validated at plan
// time, so parse errors here can only come from unknown values, which are reported.
func (m podModel) podOptions(ctx context.Context) (jobs.PodOptions, diag.Diagnostics) {
	var diags diag.Diagnostics
	o := jobs.PodOptions{
		Image:              m.Image.ValueString(),
		GPUs:               m.GPUs.ValueInt64(),
		GPUResource:        m.GPUResourceName.ValueString(),
		CPU:                m.CPU.ValueString(),
		Memory:             m.Memory.ValueString(),
		PriorityClassName:  m.PriorityClassName.ValueString(),
		ServiceAccountName: m.ServiceAccountName.ValueString(),
		ImagePullPolicy:    corev1.PullPolicy(m.ImagePullPolicy.ValueString()),
		ShmSize:            m.ShmSize.ValueString(),
	}
	o.Security = security(ctx, m.SecurityContext, &diags)
	diags.Append(m.PodPatch.ElementsAs(ctx, &o.Patches, true)...)
	o.Roles = roleOptions(ctx, m.Roles, &diags)
	var sensitive map[string]string
	diags.Append(m.ExtendedResources.ElementsAs(ctx, &o.ExtendedResources, true)...)
	diags.Append(m.Env.ElementsAs(ctx, &o.Env, true)...)
	diags.Append(m.SensitiveEnv.ElementsAs(ctx, &sensitive, true)...)
	o.Env = mergeMaps(o.Env, sensitive)
	var secretEnv map[string]secretKeyModel
	diags.Append(m.EnvSecret.ElementsAs(ctx, &secretEnv, true)...)
	for name, ref := range secretEnv {
		if o.SecretEnv == nil {
			o.SecretEnv = map[string]jobs.SecretKey{}
		}
		o.SecretEnv[name] = jobs.SecretKey{Secret: ref.Secret.ValueString(), Key: ref.Key.ValueString()}
	}
	diags.Append(m.EnvFromSecrets.ElementsAs(ctx, &o.EnvFromSecrets, true)...)
	diags.Append(m.Labels.ElementsAs(ctx, &o.Labels, true)...)
	diags.Append(m.Annotations.ElementsAs(ctx, &o.Annotations, true)...)
	diags.Append(m.NodeSelector.ElementsAs(ctx, &o.NodeSelector, true)...)
	diags.Append(m.ImagePullSecrets.ElementsAs(ctx, &o.ImagePullSecrets, true)...)

	o.Tolerations = tolerationsOf(ctx, m.Tolerations, m.Toleration, &diags)
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

// setFromPodOptions sets the shared attributes from what the cluster holds. The model holds the
// prior state (null on import): where the cluster says the same as the state in other words (a
// quantity written `16384Mi` for `16Gi`, a toleration string written as a block), the state's words are kept, so that only a real difference shows in a
// plan. Labels and annotations are the user's only: on refresh, those of the keys the state
// has (anyone may add their own, as controllers and tools do); on import, all but the keys
// tools and controllers write (jobs.SystemKey).
func (m *podModel) setFromPodOptions(ctx context.Context, o jobs.PodOptions) diag.Diagnostics {
	var diags diag.Diagnostics
	imported := m.imported()
	prior, priorDiags := m.podOptions(ctx)
	var priorSensitive map[string]string
	priorDiags.Append(m.SensitiveEnv.ElementsAs(ctx, &priorSensitive, true)...)
	if imported || priorDiags.HasError() {
		prior, priorSensitive = jobs.PodOptions{}, nil
	}
	m.Image = types.StringValue(o.Image)
	if !imported && prior.GPUResource != "" {
		// The state names the GPUs' resource, which a read of the object alone only guesses.
		o.ExtendedResources = maps.Clone(o.ExtendedResources)
		o.TakeGPUs(prior.GPUResource)
	}
	m.ExtendedResources = optionalMap(ctx, o.ExtendedResources, &diags)
	m.GPUs = types.Int64Value(o.GPUs)
	m.GPUResourceName = types.StringValue(o.GPUResource)
	if o.GPUResource == "" {
		m.GPUResourceName = types.StringValue(jobs.DefaultGPUResource)
	}
	m.CPU = sameQuantity(m.CPU, o.CPU)
	m.Memory = sameQuantity(m.Memory, o.Memory)
	m.ShmSize = sameQuantity(m.ShmSize, o.ShmSize)
	m.PriorityClassName = optionalString(o.PriorityClassName)
	m.ServiceAccountName = optionalString(o.ServiceAccountName)
	m.ImagePullPolicy = optionalString(string(o.ImagePullPolicy))
	// Variables the state has as sensitive stay so; on import every inline value is `env`.
	plain, sensitive := map[string]string{}, map[string]string{}
	for k, v := range o.Env {
		if _, wasSensitive := priorSensitive[k]; wasSensitive {
			sensitive[k] = v
		} else {
			plain[k] = v
		}
	}
	m.Env = optionalMap(ctx, plain, &diags)
	m.SensitiveEnv = optionalMap(ctx, sensitive, &diags)
	m.EnvSecret = types.MapNull(secretKeyType)
	if len(o.SecretEnv) > 0 {
		refs := map[string]attr.Value{}
		for name, ref := range o.SecretEnv {
			refs[name] = types.ObjectValueMust(secretKeyType.AttrTypes, map[string]attr.Value{
				"secret": types.StringValue(ref.Secret), "key": types.StringValue(ref.Key)})
		}
		m.EnvSecret = types.MapValueMust(secretKeyType, refs)
	}
	m.EnvFromSecrets = optionalList(ctx, o.EnvFromSecrets, &diags)
	m.Labels = optionalMap(ctx, usersKeys(o.Labels, prior.Labels, imported), &diags)
	m.Annotations = optionalMap(ctx, usersKeys(o.Annotations, prior.Annotations, imported), &diags)
	m.NodeSelector = optionalMap(ctx, o.NodeSelector, &diags)
	m.ImagePullSecrets = optionalList(ctx, o.ImagePullSecrets, &diags)

	if imported || !equality.Semantic.DeepEqual(normalTolerations(prior.Tolerations), normalTolerations(o.Tolerations)) {
		tolerations, rest := jobs.FormatTolerations(o.Tolerations)
		m.Toleration = nil
		for _, t := range rest {
			m.Toleration = append(m.Toleration, tolerationModel{
				Key:               optionalString(t.Key),
				Operator:          types.StringValue(cmp.Or(string(t.Operator), string(corev1.TolerationOpEqual))),
				Value:             optionalString(t.Value),
				Effect:            optionalString(string(t.Effect)),
				TolerationSeconds: types.Int64PointerValue(t.TolerationSeconds),
			})
		}
		m.Tolerations = optionalList(ctx, tolerations, &diags)
	}
	var volumes []string
	for _, v := range o.DataVolumes {
		volumes = append(volumes, v.String())
	}
	m.DataVolumes = optionalList(ctx, volumes, &diags)
	m.SecurityContext = securityValue(ctx, o.Security, &diags)
	return diags
}

// sameQuantity is the quantity the cluster holds, in the state's words when they mean the same.
func sameQuantity(prior types.String, read string) types.String {
	if read == "" {
		return types.StringNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		p, errP := resource.ParseQuantity(prior.ValueString())
		r, errR := resource.ParseQuantity(read)
		if errP == nil && errR == nil && p.Cmp(r) == 0 {
			return prior
		}
	}
	return types.StringValue(read)
}

// usersKeys are the labels or annotations that are the user's: on import, every key but those
// tools and controllers write; on refresh, those of the keys the state has.
func usersKeys(read, prior map[string]string, imported bool) map[string]string {
	out := map[string]string{}
	for k, v := range read {
		if _, inState := prior[k]; (imported && !jobs.SystemKey(k)) || (!imported && inState) {
			out[k] = v
		}
	}
	return out
}

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
