package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// MultiKueue's objects as code: a worker cluster (training_multikueue_cluster), the clusters of
// an admission check (training_multikueue_config) and the check (training_admission_check),
// which a training_cluster_queue lists in admission_checks. The worker cluster's and the check's
// status is MultiKueue's Active condition, read at create (once MultiKueue has set it) and at
// every refresh.

// Create waits for MultiKueue's condition on a worker cluster and an admission check.
var (
	_ settling = (*multiKueueClusterModel)(nil)
	_ settling = (*admissionCheckModel)(nil)
)

// activeModel is the Active condition of a MultiKueueCluster or an AdmissionCheck.
type activeModel struct {
	Active  types.Bool   `tfsdk:"active"`
	Reason  types.String `tfsdk:"reason"`
	Message types.String `tfsdk:"message"`
}

func (m *activeModel) set(a kueue.Active) {
	m.Active, m.Reason, m.Message = types.BoolNull(), types.StringNull(), types.StringNull()
	if a.Known {
		m.Active, m.Reason, m.Message = types.BoolValue(a.Active), types.StringValue(a.Reason), types.StringValue(a.Message)
	}
}

// activeAttributes adds the Active condition's attributes to attrs: of a worker cluster
// (connected) or of an admission check (usable).
func activeAttributes(attrs map[string]schema.Attribute, what, reasons string) map[string]schema.Attribute {
	keepBool := []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}
	keepString := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	attrs["active"] = schema.BoolAttribute{Computed: true, PlanModifiers: keepBool,
		MarkdownDescription: "Whether " + what + ", as MultiKueue's condition `Active` says, at create and at the last refresh; null until MultiKueue has said."}
	attrs["reason"] = schema.StringAttribute{Computed: true, PlanModifiers: keepString,
		MarkdownDescription: "The condition's reason: " + reasons + "."}
	attrs["message"] = schema.StringAttribute{Computed: true, PlanModifiers: keepString,
		MarkdownDescription: "The condition's message, MultiKueue's own words (why a cluster is not connected: the kubeconfig's error, the connection's)."}
	return attrs
}

// settled says whether MultiKueue has set the object's Active condition: create waits for it
// (settling).
func (activeModel) settled(obj *unstructured.Unstructured) bool { return kueue.ReadActive(obj).Known }

func newMultiKueueClusterResource() resource.Resource {
	return &objectResource[multiKueueClusterModel, *multiKueueClusterModel]{typeName: "multikueue_cluster", schema: multiKueueClusterSchema,
		importID: func(id string) (*multiKueueClusterModel, error) {
			return &multiKueueClusterModel{Name: types.StringValue(id)}, clusterScopedID(id)
		}}
}

type multiKueueClusterModel struct {
	ID               types.String   `tfsdk:"id"`
	Name             types.String   `tfsdk:"name"`
	KubeconfigSecret types.String   `tfsdk:"kubeconfig_secret"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
	activeModel
}

func multiKueueClusterSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A worker cluster of Kueue's [MultiKueue](https://kueue.sigs.k8s.io/docs/concepts/multikueue/) " +
			"(`MultiKueueCluster`): the manager cluster's Kueue reaches it with the kubeconfig in a Secret of Kueue's namespace, and " +
			"dispatches to it the jobs of the ClusterQueues whose MultiKueue admission check lists it. The Secret is named, never read: " +
			"its contents are in neither the plan nor the state. `active`, `reason` and `message` say whether Kueue is connected to the " +
			"cluster and why not (`BadKubeConfig`: the Secret or its `kubeconfig` key is missing; `InsecureKubeConfig`: a kubeconfig Kueue " +
			"refuses; `ClientConnectionFailed`: the server cannot be reached). Imported by name.",
		Attributes: activeAttributes(map[string]schema.Attribute{
			"id":   idAttribute("The MultiKueueCluster's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the MultiKueueCluster (cluster-scoped), which `training_multikueue_config`'s `clusters` names."},
			"kubeconfig_secret": schema.StringAttribute{Required: true, Validators: []validator.String{nonBlankRule},
				MarkdownDescription: "Name of the Secret, in Kueue's namespace (`kueue-system` by default), whose key `" + kueue.KubeconfigSecretKey +
					"` holds the worker cluster's kubeconfig (`clusterSource.kubeConfig`, `locationType: Secret`). Kueue refuses a kubeconfig with " +
					"a token file, exec plugins or insecure TLS. Changing it updates the cluster in place: Kueue reconnects."},
		}, "Kueue is connected to the worker cluster", "`Active`, `BadKubeConfig`, `InsecureKubeConfig`, `ClientConnectionFailed`"),
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *multiKueueClusterModel) target() kube.Target {
	return kube.Target{GVR: kueue.MultiKueueClusterGVR, Kind: "MultiKueueCluster", Name: m.Name.ValueString()}
}

func (m *multiKueueClusterModel) timeouts() timeouts.Value { return m.Timeouts }
func (m *multiKueueClusterModel) setID()                   { m.ID = m.Name }
func (m *multiKueueClusterModel) deleteHint() string       { return kueueDeleteHint }

func (m *multiKueueClusterModel) keepStatus(prior objectModel) {
	if p, ok := prior.(*multiKueueClusterModel); ok {
		m.activeModel = p.activeModel
	}
}

func (m *multiKueueClusterModel) build(context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj, err := kueue.MultiKueueClusterSpec{Name: m.Name.ValueString(), KubeconfigSecret: m.KubeconfigSecret.ValueString()}.Build()
	if err != nil {
		diags.AddError("Invalid MultiKueueCluster", err.Error())
	}
	return obj, diags
}

func (m *multiKueueClusterModel) read(_ context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s, err := kueue.ReadMultiKueueCluster(obj)
	if err != nil {
		diags.AddError("Error reading MultiKueueCluster "+obj.GetName(), err.Error())
		return diags
	}
	m.KubeconfigSecret = types.StringValue(s.KubeconfigSecret)
	m.set(kueue.ReadActive(obj))
	return diags
}

func newMultiKueueConfigResource() resource.Resource {
	return &objectResource[multiKueueConfigModel, *multiKueueConfigModel]{typeName: "multikueue_config", schema: multiKueueConfigSchema,
		importID: func(id string) (*multiKueueConfigModel, error) {
			return &multiKueueConfigModel{Name: types.StringValue(id)}, clusterScopedID(id)
		}}
}

type multiKueueConfigModel struct {
	ID       types.String   `tfsdk:"id"`
	Name     types.String   `tfsdk:"name"`
	Clusters types.List     `tfsdk:"clusters"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func multiKueueConfigSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The worker clusters of a MultiKueue admission check (`MultiKueueConfig`): the jobs of a ClusterQueue whose " +
			"`training_admission_check` names this config are dispatched to one of them, the first to admit the job. Imported by name.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute("The MultiKueueConfig's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the MultiKueueConfig (cluster-scoped)."},
			"clusters": schema.ListAttribute{ElementType: types.StringType, Required: true,
				Validators:          []validator.List{listvalidator.SizeBetween(1, 20), listvalidator.UniqueValues(), listvalidator.ValueStringsAre(nonBlankRule)},
				MarkdownDescription: "The `training_multikueue_cluster`s' names: 1 to 20, unique. Changing them updates the config in place."},
		},
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *multiKueueConfigModel) target() kube.Target {
	return kube.Target{GVR: kueue.MultiKueueConfigGVR, Kind: "MultiKueueConfig", Name: m.Name.ValueString()}
}

func (m *multiKueueConfigModel) timeouts() timeouts.Value { return m.Timeouts }
func (m *multiKueueConfigModel) setID()                   { m.ID = m.Name }
func (m *multiKueueConfigModel) deleteHint() string       { return kueueDeleteHint }
func (m *multiKueueConfigModel) keepStatus(objectModel)   {}

func (m *multiKueueConfigModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.MultiKueueConfigSpec{Name: m.Name.ValueString()}
	diags.Append(m.Clusters.ElementsAs(ctx, &s.Clusters, false)...)
	if diags.HasError() {
		return nil, diags
	}
	obj, err := s.Build()
	if err != nil {
		diags.AddError("Invalid MultiKueueConfig", err.Error())
	}
	return obj, diags
}

func (m *multiKueueConfigModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Clusters = optionalList(ctx, kueue.ReadMultiKueueConfig(obj).Clusters, &diags)
	return diags
}

func newAdmissionCheckResource() resource.Resource {
	return &objectResource[admissionCheckModel, *admissionCheckModel]{typeName: "admission_check", schema: admissionCheckSchema,
		importID: func(id string) (*admissionCheckModel, error) {
			return &admissionCheckModel{Name: types.StringValue(id)}, clusterScopedID(id)
		}}
}

type admissionCheckModel struct {
	ID               types.String   `tfsdk:"id"`
	Name             types.String   `tfsdk:"name"`
	MultiKueueConfig types.String   `tfsdk:"multikueue_config"`
	Provisioning     types.String   `tfsdk:"provisioning_request_config"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
	activeModel
}

func admissionCheckSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue admission check: a `training_cluster_queue` that lists it in `admission_checks` gives a job its quota, " +
			"then admits it only once the check passes. With `multikueue_config`, a MultiKueue check (controller `" + kueue.MultiKueueController + "`) " +
			"dispatches each job to a worker cluster of the named `training_multikueue_config`; with `provisioning_request_config`, a check of " +
			"Kueue's provisioning controller (`" + kueue.ProvisioningController + "`) asks the cluster's autoscaler for the job's capacity as the " +
			"named `training_provisioning_request_config` says, and admits the job once it is provisioned. `active`, `reason` and `message` say " +
			"whether the check works (MultiKueue: `BadConfig`, the config is missing; `NoUsableClusters`, none of its clusters is connected; " +
			"`SomeActiveClusters`, some are. Provisioning: `BadParametersRef`, the config is missing). Imported by name; an AdmissionCheck " +
			"of another controller does not import.",
		Attributes: activeAttributes(map[string]schema.Attribute{
			"id":   idAttribute("The AdmissionCheck's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the AdmissionCheck (cluster-scoped), which a ClusterQueue's `admission_checks` names."},
			"multikueue_config": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule,
				stringvalidator.ExactlyOneOf(path.MatchRoot("provisioning_request_config"))}, PlanModifiers: replaceOnControllerChange,
				MarkdownDescription: "The `training_multikueue_config`'s name (`spec.parameters`), for a MultiKueue check. Changing it updates the check in place; " +
					"moving to `provisioning_request_config` replaces it."},
			"provisioning_request_config": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule}, PlanModifiers: replaceOnControllerChange,
				MarkdownDescription: "The `training_provisioning_request_config`'s name, for a check of capacity on demand. Changing it updates the check in " +
					"place; moving to `multikueue_config` replaces it."},
		}, "the check works", "`Active`, `SomeActiveClusters`, `NoUsableClusters`, `BadConfig`, `BadParametersRef`"),
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

// replaceOnControllerChange replaces an admission check that moves between MultiKueue and the
// provisioning controller: Kueue keeps an AdmissionCheck's controllerName as it was made.
var replaceOnControllerChange = []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
	func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.State.Raw.IsNull() && req.StateValue.IsNull() != req.PlanValue.IsNull()
	}, "Replaces the check when it moves between MultiKueue and capacity provisioning.",
	"Replaces the check when it moves between MultiKueue and capacity provisioning.")}

func (m *admissionCheckModel) target() kube.Target {
	return kube.Target{GVR: kueue.AdmissionCheckGVR, Kind: "AdmissionCheck", Name: m.Name.ValueString()}
}

func (m *admissionCheckModel) timeouts() timeouts.Value { return m.Timeouts }
func (m *admissionCheckModel) setID()                   { m.ID = m.Name }
func (m *admissionCheckModel) deleteHint() string       { return kueueDeleteHint }

func (m *admissionCheckModel) keepStatus(prior objectModel) {
	if p, ok := prior.(*admissionCheckModel); ok {
		m.activeModel = p.activeModel
	}
}

func (m *admissionCheckModel) build(context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj, err := kueue.AdmissionCheckSpec{Name: m.Name.ValueString(), Config: m.MultiKueueConfig.ValueString(),
		ProvisioningConfig: m.Provisioning.ValueString()}.Build()
	if err != nil {
		diags.AddError("Invalid AdmissionCheck", err.Error())
	}
	return obj, diags
}

func (m *admissionCheckModel) read(_ context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s, err := kueue.ReadAdmissionCheck(obj)
	if err != nil {
		diags.AddError("Error reading AdmissionCheck "+obj.GetName(), err.Error())
		return diags
	}
	m.MultiKueueConfig, m.Provisioning = optionalString(s.Config), optionalString(s.ProvisioningConfig)
	m.set(kueue.ReadActive(obj))
	return diags
}
