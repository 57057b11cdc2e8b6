package provider

import (
	"math"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// keepBool keeps an optional computed flag as the state has it while the configuration leaves
// it unset.
var keepBool = []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}

// suspendUnset says what a job's suspend left unset does.
const suspendUnset = " Unset, the job is created running and Terraform then leaves its suspend as the cluster has it, so that the " +
	"actions `training_suspend_job` and `training_resume_job` (or kubectl) suspend and resume it without a change to plan; set, it is " +
	"Terraform's, and the next apply sets it back (the plan shows it). A queued job's suspend while it waits is Kueue's, never drift."

// runPolicyModel is what every Kubeflow job resource (MPI, TF, PyTorch) says besides its
// replicas: its run policy and its queue.
type runPolicyModel struct {
	CleanPodPolicy          types.String `tfsdk:"clean_pod_policy"`
	TTLSecondsAfterFinished types.Int64  `tfsdk:"ttl_seconds_after_finished"`
	BackoffLimit            types.Int64  `tfsdk:"backoff_limit"`
	ActiveDeadlineSeconds   types.Int64  `tfsdk:"active_deadline_seconds"`
	QueueName               types.String `tfsdk:"queue_name"`
	WorkloadPriorityClass   types.String `tfsdk:"workload_priority_class"`
	Suspend                 types.Bool   `tfsdk:"suspend"`
	GangScheduling          *gangModel   `tfsdk:"gang_scheduling"`
}

// gangModel is a job's gang_scheduling (its run policy's schedulingPolicy).
type gangModel struct {
	MinAvailable           types.Int64  `tfsdk:"min_available"`
	VolcanoQueue           types.String `tfsdk:"volcano_queue"`
	PriorityClassName      types.String `tfsdk:"priority_class_name"`
	ScheduleTimeoutSeconds types.Int64  `tfsdk:"schedule_timeout_seconds"`
}

// runPolicyAttributes are the run policy's attributes; retried names what backoff_limit counts.
// A field the kind's operator honours on a running job (its LiveRunPolicy) changes in place;
// any other replaces the job, since its operator reads it only when the job starts.
func runPolicyAttributes(kind *jobs.Kind, retried string) map[string]schema.Attribute {
	live := kind.LiveRunPolicy
	change := func(inPlace bool) string {
		if inPlace {
			return " Changing it updates the running job in place."
		}
		return " " + kind.Operator + " reads it only when the job starts, so changing it replaces the job."
	}
	return map[string]schema.Attribute{
		"clean_pod_policy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("Running"),
			Validators: []validator.String{stringvalidator.OneOf(jobs.CleanPodPolicies...)},
			MarkdownDescription: "Which pods to delete when the job finishes: `None`, `Running` or `All`. Default `Running`, " +
				"so that pods left running (an MPI worker's SSH daemon, a parameter server) do not hold their GPUs." + change(live.CleanPodPolicy)},
		"ttl_seconds_after_finished": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Seconds after which the operator deletes a finished job. A job that existed and is then gone " +
				"from the cluster stays in state with a warning rather than running again (see `recreate_if_missing`)." + change(live.TTLSecondsAfterFinished)},
		"backoff_limit": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Retries of " + retried + " before the job is marked failed." + change(live.BackoffLimit)},
		"active_deadline_seconds": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)},
			MarkdownDescription: "Seconds the job may run before it is stopped and marked failed." + change(live.ActiveDeadlineSeconds)},
		"suspend": schema.BoolAttribute{Optional: true, Computed: true, PlanModifiers: keepBool,
			MarkdownDescription: "Suspend the job (`runPolicy.suspend`): " + kind.Operator + " deletes its pods and keeps the job, and " +
				"setting it back to false starts them again. With `suspend = true` create and update do not wait for " +
				"the job to run." + suspendUnset + change(live.Suspend)},
		"queue_name": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule, labelValueRule},
			MarkdownDescription: "Kueue LocalQueue to submit the job to (label `" + jobs.QueueLabel + "`). Changing it replaces the job." + queueNamePlan},
		"workload_priority_class": workloadPriorityClassAttribute(),
		"gang_scheduling": schema.SingleNestedAttribute{Optional: true,
			Attributes: mergeAttributes(scheduleTimeoutAttribute(false), map[string]schema.Attribute{
				"min_available": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, math.MaxInt32)},
					MarkdownDescription: "Pods that must be placed together before any starts (`minAvailable`); the operator's default is every pod of the job."},
				"volcano_queue": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule},
					MarkdownDescription: "The Volcano queue of the PodGroup (its `spec.queue`), not Kueue's (see `queue_name`)."},
				"priority_class_name": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule},
					MarkdownDescription: "PriorityClass of the PodGroup (`priorityClass`). Kueue reads it as the job's priority before the pods'."},
			}),
			MarkdownDescription: "Gang scheduling by the operator (`runPolicy.schedulingPolicy`): what " + kind.Operator + " puts in the PodGroup it " +
				"makes for the job when it runs with a gang scheduler (Volcano, or the scheduler-plugins' coscheduling; set `scheduler_name` " +
				"to that scheduler). Without one the operator makes no PodGroup and this changes nothing: Kueue (`queue_name`) admits a " +
				"job whole without it. The operator reads it when it makes the PodGroup, as the job starts, so changing it replaces the job."},
	}
}

// scheduleTimeoutAttribute is gang_scheduling's schedule_timeout_seconds, on jobs and on the
// runtime (required there: Trainer's coscheduling policy has no other field).
func scheduleTimeoutAttribute(required bool) map[string]schema.Attribute {
	return map[string]schema.Attribute{"schedule_timeout_seconds": schema.Int64Attribute{Optional: !required, Required: required,
		Validators:          []validator.Int64{int64validator.Between(1, math.MaxInt32)},
		MarkdownDescription: "Seconds the gang may wait to be placed whole (`scheduleTimeoutSeconds`, the scheduler-plugins' coscheduling)."}}
}

func (m *runPolicyModel) suspended() bool { return m.Suspend.ValueBool() }

func (m *runPolicyModel) suspendKnown() {
	if m.Suspend.IsUnknown() {
		m.Suspend = types.BoolValue(false)
	}
}

func (m runPolicyModel) runPolicy() jobs.RunPolicy {
	p := jobs.RunPolicy{CleanPodPolicy: m.CleanPodPolicy.ValueString(), ActiveDeadlineSeconds: m.ActiveDeadlineSeconds.ValueInt64Pointer(),
		QueueName: m.QueueName.ValueString(), WorkloadPriorityClass: m.WorkloadPriorityClass.ValueString(), Suspend: m.Suspend.ValueBool()}
	if !m.TTLSecondsAfterFinished.IsNull() {
		p.TTLSecondsAfterFinished = ptr.To(int32(m.TTLSecondsAfterFinished.ValueInt64()))
	}
	if !m.BackoffLimit.IsNull() {
		p.BackoffLimit = ptr.To(int32(m.BackoffLimit.ValueInt64()))
	}
	if g := m.GangScheduling; g != nil {
		p.Scheduling = &jobs.SchedulingPolicy{MinAvailable: int32Of(g.MinAvailable), ScheduleTimeoutSeconds: int32Of(g.ScheduleTimeoutSeconds),
			Queue: g.VolcanoQueue.ValueString(), PriorityClass: g.PriorityClassName.ValueString()}
	}
	return p
}

// int32Of is an Int64 attribute's value as the API's int32; nil when null.
func int32Of(i types.Int64) *int32 {
	if i.IsNull() || i.IsUnknown() {
		return nil
	}
	return ptr.To(int32(i.ValueInt64()))
}

func (m *runPolicyModel) setRunPolicy(p jobs.RunPolicy) {
	m.CleanPodPolicy = types.StringValue(p.CleanPodPolicy)
	m.QueueName = optionalString(p.QueueName)
	m.WorkloadPriorityClass = optionalString(p.WorkloadPriorityClass)
	m.TTLSecondsAfterFinished = optionalInt(p.TTLSecondsAfterFinished)
	m.BackoffLimit = optionalInt(p.BackoffLimit)
	m.ActiveDeadlineSeconds = types.Int64PointerValue(p.ActiveDeadlineSeconds)
	m.Suspend = types.BoolValue(p.Suspend)
	m.GangScheduling = nil
	if sp := p.Scheduling; sp != nil {
		m.GangScheduling = &gangModel{MinAvailable: optionalInt(sp.MinAvailable), VolcanoQueue: optionalString(sp.Queue),
			PriorityClassName: optionalString(sp.PriorityClass), ScheduleTimeoutSeconds: optionalInt(sp.ScheduleTimeoutSeconds)}
	}
}

func optionalInt(p *int32) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}

// workloadPriorityClassAttribute is a queued job's workload_priority_class, on every kind Kueue
// queues.
func workloadPriorityClassAttribute() schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule, objectNameRule, labelValueRule},
		MarkdownDescription: "Kueue [WorkloadPriorityClass](https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/) of the job " +
			"(label `" + jobs.PriorityClassLabel + "`), such as a `training_workload_priority_class`'s `name`: Kueue orders its queue and " +
			"preempts by this priority instead of the pods' `priority_class_name`, which the scheduler still uses. Needs `queue_name`. " +
			"Changing it from one class to another updates the job in place, and Kueue gives its workload the new priority, queued or " +
			"running; adding or removing it replaces the job, since Kueue refuses to remove a job's class and to add one to a job that " +
			"runs. A class that does not exist makes Kueue hold the job without a workload: the plan warns of it."}
}
