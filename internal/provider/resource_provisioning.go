package provider

import (
	"context"
	"math"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// training_provisioning_request_config: capacity on demand, the parameters of an admission check
// of Kueue's provisioning controller (training_admission_check's provisioning_request_config).

func newProvisioningRequestConfigResource() resource.Resource {
	return &objectResource[provisioningConfigModel, *provisioningConfigModel]{typeName: "provisioning_request_config", schema: provisioningConfigSchema,
		importID: func(id string) (*provisioningConfigModel, error) {
			return &provisioningConfigModel{Name: types.StringValue(id)}, clusterScopedID(id)
		}}
}

type provisioningConfigModel struct {
	ID                types.String   `tfsdk:"id"`
	Name              types.String   `tfsdk:"name"`
	ProvisioningClass types.String   `tfsdk:"provisioning_class"`
	Parameters        types.Map      `tfsdk:"parameters"`
	ManagedResources  types.List     `tfsdk:"managed_resources"`
	RetryLimit        types.Int64    `tfsdk:"retry_limit"`
	RetryBaseSeconds  types.Int64    `tfsdk:"retry_base_seconds"`
	RetryMaxSeconds   types.Int64    `tfsdk:"retry_max_seconds"`
	NodeSelector      types.Map      `tfsdk:"node_selector_from_class_details"`
	PodSetMergePolicy types.String   `tfsdk:"pod_set_merge_policy"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

func provisioningConfigSchema(ctx context.Context) schema.Schema {
	retry := func(def int64, what string) schema.Int64Attribute {
		return schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(def),
			Validators: []validator.Int64{int64validator.Between(0, math.MaxInt32)}, MarkdownDescription: what + " Changed in place."}
	}
	return schema.Schema{
		MarkdownDescription: "A Kueue [ProvisioningRequestConfig](https://kueue.sigs.k8s.io/docs/admission-check-controllers/provisioning/): " +
			"how capacity is asked for before a job is admitted. A `training_admission_check` with `provisioning_request_config` names it, " +
			"and a `training_cluster_queue` listing that check in `admission_checks` gives each job its quota, then has Kueue make a " +
			"ProvisioningRequest for the job's pods, which the cluster's autoscaler (cluster-autoscaler, GKE's Dynamic Workload " +
			"Scheduler) serves; the job is admitted, and its pods made, once the capacity is provisioned. It needs the " +
			"ProvisioningRequest API (`autoscaling.x-k8s.io/v1`) on the cluster when Kueue starts: without it Kueue runs no " +
			"provisioning controller and the check stays inactive. Imported by name.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute("The ProvisioningRequestConfig's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the ProvisioningRequestConfig (cluster-scoped), which a `training_admission_check` names."},
			"provisioning_class": schema.StringAttribute{Required: true, Validators: []validator.String{nonBlankRule},
				MarkdownDescription: "The ProvisioningRequest class the autoscaler serves (`provisioningClassName`): `check-capacity.autoscaling.x-k8s.io` " +
					"(capacity that exists now), `best-effort-atomic-scale-up.autoscaling.x-k8s.io` (nodes added for the whole job or none), or " +
					"`queued-provisioning.gke.io` (GKE's Dynamic Workload Scheduler). Changed in place; requests already made keep theirs."},
			"parameters": schema.MapAttribute{ElementType: types.StringType, Optional: true,
				Validators:          []validator.Map{mapvalidator.SizeAtMost(100), mapvalidator.ValueStringsAre(stringvalidator.LengthAtMost(255))},
				MarkdownDescription: "The class's parameters, passed on in each request (`parameters`), e.g. `{ ValidUntilSeconds = \"3600\" }`. Changed in place."},
			"managed_resources": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators:          []validator.List{listvalidator.SizeBetween(1, 100), listvalidator.UniqueValues()},
				MarkdownDescription: "The resources whose capacity is asked for, e.g. `[\"nvidia.com/gpu\"]`: a job asking for none of them is admitted without a request. Unset: every resource. Changed in place."},
			"retry_limit":        retry(kueue.DefaultRetryLimit, "How many times a failed or expired request is made again before the job is evicted back to its queue (`retryStrategy.backoffLimitCount`); 0 never. Default 3."),
			"retry_base_seconds": retry(kueue.DefaultRetryBaseSeconds, "Seconds before the first retry, doubled at each (`backoffBaseSeconds`). Default 60."),
			"retry_max_seconds":  retry(kueue.DefaultRetryMaxSeconds, "The longest wait between retries (`backoffMaxSeconds`). Default 1800."),
			"node_selector_from_class_details": schema.MapAttribute{ElementType: types.StringType, Optional: true,
				Validators: []validator.Map{mapvalidator.SizeAtMost(8), mapvalidator.KeysAre(labelKeyRule)},
				MarkdownDescription: "Node labels the provisioned capacity gives the job's pods (`podSetUpdates.nodeSelector`): each key is a label, " +
					"each value the name of the provisioned request's class detail that holds the label's value, e.g. " +
					"`{ \"cloud.google.com/gke-nodepool\" = \"nodepool\" }`. Changed in place."},
			"pod_set_merge_policy": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf(kueue.PodSetMergePolicies...)},
				MarkdownDescription: "Whether one request covers the job's pod sets that are alike (`podSetMergePolicy`): `IdenticalPodTemplates` or " +
					"`IdenticalWorkloadSchedulingRequirements`. Unset: one pod set per request entry. Changed in place."},
		},
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *provisioningConfigModel) target() kube.Target {
	return kube.Target{GVR: kueue.ProvisioningRequestConfigGVR, Kind: "ProvisioningRequestConfig", Name: m.Name.ValueString()}
}

func (m *provisioningConfigModel) timeouts() timeouts.Value { return m.Timeouts }
func (m *provisioningConfigModel) setID()                   { m.ID = m.Name }
func (m *provisioningConfigModel) keepStatus(objectModel)   {}

func (m *provisioningConfigModel) deleteHint() string {
	return "Kueue does not hold a ProvisioningRequestConfig: an admission check that names it becomes inactive (BadParametersRef)."
}

func (m *provisioningConfigModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.ProvisioningRequestConfigSpec{Name: m.Name.ValueString(), ProvisioningClass: m.ProvisioningClass.ValueString(),
		RetryLimit: int32(m.RetryLimit.ValueInt64()), RetryBaseSeconds: int32(m.RetryBaseSeconds.ValueInt64()), RetryMaxSeconds: int32(m.RetryMaxSeconds.ValueInt64()),
		PodSetMergePolicy: m.PodSetMergePolicy.ValueString()}
	diags.Append(m.Parameters.ElementsAs(ctx, &s.Parameters, true)...)
	diags.Append(m.ManagedResources.ElementsAs(ctx, &s.ManagedResources, true)...)
	diags.Append(m.NodeSelector.ElementsAs(ctx, &s.NodeSelector, true)...)
	if diags.HasError() {
		return nil, diags
	}
	obj, err := s.Build()
	if err != nil {
		diags.AddError("Invalid ProvisioningRequestConfig", err.Error())
	}
	return obj, diags
}

func (m *provisioningConfigModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s := kueue.ReadProvisioningRequestConfig(obj)
	m.ProvisioningClass = types.StringValue(s.ProvisioningClass)
	m.Parameters = optionalMap(ctx, s.Parameters, &diags)
	m.ManagedResources = optionalList(ctx, s.ManagedResources, &diags)
	m.RetryLimit = types.Int64Value(int64(s.RetryLimit))
	m.RetryBaseSeconds = types.Int64Value(int64(s.RetryBaseSeconds))
	m.RetryMaxSeconds = types.Int64Value(int64(s.RetryMaxSeconds))
	m.NodeSelector = optionalMap(ctx, s.NodeSelector, &diags)
	m.PodSetMergePolicy = optionalString(s.PodSetMergePolicy)
	return diags
}
