package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// runPolicyModel is what every Kubeflow job resource (MPI, TF, PyTorch) says besides its
// replicas: its run policy and its queue.
type runPolicyModel struct {
	CleanPodPolicy          types.String `tfsdk:"clean_pod_policy"`
	TTLSecondsAfterFinished types.Int64  `tfsdk:"ttl_seconds_after_finished"`
	BackoffLimit            types.Int64  `tfsdk:"backoff_limit"`
	ActiveDeadlineSeconds   types.Int64  `tfsdk:"active_deadline_seconds"`
	QueueName               types.String `tfsdk:"queue_name"`
}

// runPolicyAttributes are the run policy's attributes; retried names what backoff_limit counts.
func runPolicyAttributes(retried string) map[string]schema.Attribute {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceInt := []planmodifier.Int64{int64planmodifier.RequiresReplace()}
	return map[string]schema.Attribute{
		"clean_pod_policy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("Running"),
			PlanModifiers: replaceString, Validators: []validator.String{stringvalidator.OneOf(jobs.CleanPodPolicies...)},
			MarkdownDescription: "Which pods to delete when the job finishes: `None`, `Running` or `All`. Default `Running`, " +
				"so that pods left running (an MPI worker's SSH daemon, a parameter server) do not hold their GPUs."},
		"ttl_seconds_after_finished": schema.Int64Attribute{Optional: true, PlanModifiers: replaceInt,
			Validators: []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Seconds after which the operator cleans up a finished job. " +
				"Whenever a finished job is gone from the cluster, the resource stays in state with a warning rather than re-running; " +
				"`terraform apply -replace` runs it again."},
		"backoff_limit": schema.Int64Attribute{Optional: true, PlanModifiers: replaceInt,
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Retries of " + retried + " before the job is marked failed."},
		"active_deadline_seconds": schema.Int64Attribute{Optional: true, PlanModifiers: replaceInt,
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
			MarkdownDescription: "Seconds the job may run before it is stopped and marked failed."},
		"queue_name": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{labelValueRule},
			MarkdownDescription: "Kueue LocalQueue to submit the job to (label `" + jobs.QueueLabel + "`)."},
	}
}

func (m runPolicyModel) runPolicy() jobs.RunPolicy {
	p := jobs.RunPolicy{CleanPodPolicy: m.CleanPodPolicy.ValueString(), ActiveDeadlineSeconds: m.ActiveDeadlineSeconds.ValueInt64Pointer(),
		QueueName: m.QueueName.ValueString()}
	if !m.TTLSecondsAfterFinished.IsNull() {
		p.TTLSecondsAfterFinished = ptr.To(int32(m.TTLSecondsAfterFinished.ValueInt64()))
	}
	if !m.BackoffLimit.IsNull() {
		p.BackoffLimit = ptr.To(int32(m.BackoffLimit.ValueInt64()))
	}
	return p
}

func (m *runPolicyModel) setRunPolicy(p jobs.RunPolicy) {
	m.CleanPodPolicy = types.StringValue(p.CleanPodPolicy)
	m.QueueName = optionalString(p.QueueName)
	m.TTLSecondsAfterFinished = optionalInt(p.TTLSecondsAfterFinished)
	m.BackoffLimit = optionalInt(p.BackoffLimit)
	m.ActiveDeadlineSeconds = types.Int64PointerValue(p.ActiveDeadlineSeconds)
}

func optionalInt(p *int32) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}
