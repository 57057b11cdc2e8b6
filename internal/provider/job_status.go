package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// What a job resource waits for after create and update.
const (
	waitCreated   = "created"
	waitRunning   = "running"
	waitAdmitted  = "admitted"
	waitSucceeded = "succeeded"
)

// statusModel is the computed status every job resource shares, like `arena get` shows it.
type statusModel struct {
	Status         types.String `tfsdk:"status"`
	StartTime      types.String `tfsdk:"start_time"`
	CompletionTime types.String `tfsdk:"completion_time"`
	Duration       types.String `tfsdk:"duration"`
	Instances      types.List   `tfsdk:"instances"`
	QueueReason    types.String `tfsdk:"queue_reason"`
	WorkerCluster  types.String `tfsdk:"worker_cluster"`
	// AcceleratorHours are the job's accelerators times its duration in hours.
	AcceleratorHours types.Number `tfsdk:"accelerator_hours"`
}

// instanceType is an instance of a job resource's instances; agedInstanceType, of the
// training_job data source's, which also has its age, as `arena get` shows AGE.
var (
	instanceType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"name":  types.StringType,
		"role":  types.StringType,
		"index": types.Int64Type,
		"phase": types.StringType,
		"node":  types.StringType,
	}}
	agedInstanceType = types.ObjectType{AttrTypes: mergeAttributes(instanceType.AttrTypes, map[string]attr.Type{"age": types.StringType})}
)

func statusAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"status": schema.StringAttribute{Computed: true,
			MarkdownDescription: "The job's state as `arena get` shows it, one of " + codeList(jobs.Phases) + ": " +
				"`QUEUED` for a job with `queue_name` that Kueue has not admitted (its quota is in use, it was preempted), with the reason in `queue_reason`."},
		"queue_reason": schema.StringAttribute{Computed: true,
			MarkdownDescription: "Why Kueue has not admitted the job while it is `QUEUED`, as its Workload says (for example " +
				"`couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor gpu, 2 more needed`, or its preemption); null otherwise."},
		"worker_cluster": workerClusterAttribute(),
		"start_time": schema.StringAttribute{Computed: true,
			MarkdownDescription: "When the job started (RFC 3339); null before it has."},
		"completion_time": schema.StringAttribute{Computed: true,
			MarkdownDescription: "When the job finished (RFC 3339); null while it has not."},
		"duration": schema.StringAttribute{Computed: true,
			MarkdownDescription: "Training duration (`arena get`'s TRAINING DURATION): from start to completion, or to the last refresh while it runs."},
		"accelerator_hours": acceleratorHoursAttribute(),
		"instances": schema.ListNestedAttribute{Computed: true,
			MarkdownDescription: "The job's pods, as `arena get` lists its instances.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":  schema.StringAttribute{Computed: true, MarkdownDescription: "Pod name."},
				"role":  schema.StringAttribute{Computed: true, MarkdownDescription: "Its role in the job (`launcher`, `worker`, `etcd`, ...)."},
				"index": schema.Int64Attribute{Computed: true, MarkdownDescription: "Its index within the role."},
				"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "Pod phase: `Pending`, `Running`, `Succeeded` or `Failed`; an elastic job's task says its state in the same words (`Pending` between attempts)."},
				"node":  schema.StringAttribute{Computed: true, MarkdownDescription: "The node it runs on; empty while unscheduled."},
			}},
		},
	}
}

// over is observed with the values m knows put over it: an apply gives what its plan said.
func (m statusModel) over(observed statusModel) statusModel {
	out := observed
	if !m.Status.IsUnknown() {
		out.Status = m.Status
	}
	if !m.StartTime.IsUnknown() {
		out.StartTime = m.StartTime
	}
	if !m.CompletionTime.IsUnknown() {
		out.CompletionTime = m.CompletionTime
	}
	if !m.Duration.IsUnknown() {
		out.Duration = m.Duration
	}
	if !m.AcceleratorHours.IsUnknown() {
		out.AcceleratorHours = m.AcceleratorHours
	}
	if !m.Instances.IsUnknown() {
		out.Instances = m.Instances
	}
	if !m.QueueReason.IsUnknown() {
		out.QueueReason = m.QueueReason
	}
	if !m.WorkerCluster.IsUnknown() {
		out.WorkerCluster = m.WorkerCluster
	}
	return out
}

// planStatus keeps, in the plan of an in-place update, the status the update leaves alone, so
// that the plan shows only what changes. A rescale or a suspend or resume changes the pods and
// the job's state: its status, instances, duration and queue reason are known after apply,
// while the start time of a job that has started stays (a rescale does not restart the job)
// and so does everything of a job that has finished. Any other update (labels, annotations, the
// live run-policy fields, what Terraform alone holds) leaves the status as the state has it.
// A replacement plans a new job: the framework plans its status anew.
func planStatus(ctx context.Context, resp *resource.ModifyPlanResponse, p planned) {
	plan, state := p.next, p.prior
	if plan == nil || state == nil || p.replacing() {
		return
	}
	s := state.job().statusModel
	keep := map[string]attr.Value{"status": s.Status, "start_time": s.StartTime, "completion_time": s.CompletionTime,
		"duration": s.Duration, "instances": s.Instances, "queue_reason": s.QueueReason, "worker_cluster": s.WorkerCluster,
		"accelerator_hours": s.AcceleratorHours}
	if suspends := suspendChanged(plan, state); suspends || !plan.workers().Equal(*state.workers()) {
		keep = map[string]attr.Value{}
		if !suspends && !s.StartTime.IsNull() {
			keep["start_time"] = s.StartTime
		}
		if !s.CompletionTime.IsNull() {
			keep["completion_time"], keep["duration"], keep["accelerator_hours"] = s.CompletionTime, s.Duration, s.AcceleratorHours
		}
		if !suspends && !s.WorkerCluster.IsNull() {
			// A rescale reaches the copy where it runs; it does not move the job.
			keep["worker_cluster"] = s.WorkerCluster
		}
	}
	for name, v := range keep {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// suspendChanged says whether the plan suspends or resumes the job.
func suspendChanged(plan, state jobModel) bool {
	sp, ok := state.(suspendable)
	pp, ok2 := plan.(suspendable)
	return ok && ok2 && sp.suspended() != pp.suspended()
}

func (m *statusModel) set(s jobs.Status) diag.Diagnostics { return m.setAt(s, time.Time{}) }

// setAt records the status; with now, each instance with its age then (agedInstanceType).
func (m *statusModel) setAt(s jobs.Status, now time.Time) diag.Diagnostics {
	m.Status = types.StringValue(s.Phase)
	m.StartTime = timeString(s.StartTime)
	m.CompletionTime = timeString(s.CompletionTime)
	m.Duration = types.StringValue(s.Duration.String())
	m.AcceleratorHours = types.NumberValue(big.NewFloat(jobs.AcceleratorHours(s.Accelerators, s.Duration.Hours())))
	m.QueueReason = optionalString(s.QueueReason)
	m.WorkerCluster = optionalString(s.Cluster)
	typ := instanceType
	if !now.IsZero() {
		typ = agedInstanceType
	}
	values := make([]attr.Value, 0, len(s.Instances))
	var diags diag.Diagnostics
	for _, in := range s.Instances {
		fields := map[string]attr.Value{
			"name":  types.StringValue(in.Name),
			"role":  types.StringValue(in.Role),
			"index": types.Int64Value(int64(in.Index)),
			"phase": types.StringValue(in.Phase),
			"node":  types.StringValue(in.Node),
		}
		if !now.IsZero() {
			age := ""
			if !in.Created.IsZero() {
				age = now.Sub(in.Created).Round(time.Second).String()
			}
			fields["age"] = types.StringValue(age)
		}
		v, d := types.ObjectValue(typ.AttrTypes, fields)
		diags.Append(d...)
		values = append(values, v)
	}
	list, d := types.ListValue(typ, values)
	diags.Append(d...)
	m.Instances = list
	return diags
}

// workerClusterAttribute is a job's worker_cluster, read-only in resources and the data source.
func workerClusterAttribute() schema.StringAttribute {
	return schema.StringAttribute{Computed: true,
		MarkdownDescription: "The MultiKueue worker cluster Kueue dispatched the job to (its `MultiKueueCluster`'s name, from the Workload's " +
			"`status.clusterName`), where a copy of the job runs and its pods are; null for a job that runs in this cluster. " +
			"The job here mirrors the copy's status; its `instances` are read there when the provider's `worker_cluster` block gives that cluster."}
}

func timeString(t *time.Time) types.String {
	if t == nil {
		return types.StringNull()
	}
	return types.StringValue(t.UTC().Format(time.RFC3339))
}

// waitStopped says whether a wait ended without a verdict on the job: its timeout ran out, or
// Terraform stopped the provider (Ctrl-C, a CI runner's limit). Neither is the job's failure, so
// neither is an error: a create that failed would be tainted and its job replaced.
func waitStopped(err error) bool { return kube.Stopped(err) }

// interrupted says whether a wait ended because Terraform stopped the provider.
func interrupted(err error) bool {
	return errors.Is(err, kube.ErrWaitInterrupted) || errors.Is(err, context.Canceled)
}

// stoppedSummary is a stopped wait's warning summary: what the job is not yet, and, after an
// interruption, that the wait was interrupted.
func stoppedSummary(err error, what string) string {
	if interrupted(err) {
		return what + "; the wait was interrupted"
	}
	return what
}

// waitLonger is the last sentence of a stopped wait's warning: after an interruption, that the
// job goes on without Terraform; after a timeout, which timeout to raise.
func waitLonger(err error, timeouts string) string {
	if interrupted(err) {
		return "Terraform was stopped while it waited; the job goes on without it, and the next plan or refresh reads where it is."
	}
	return "Raise " + timeouts + " to wait longer next time."
}

// notRunningYet explains a wait that stopped on a job that has not failed: why its pods are not
// running (the scheduler's messages and Warning events), and what the apply did.
func notRunningYet(err error, o jobs.Observed) string {
	why := jobs.WhyNotRunning(o)
	if why == "" {
		why = "every pod is running, but the operator has not reported the job running yet"
	}
	return fmt.Sprintf("The wait %v. Not running because: %s. The job stays in state as it is, not tainted, "+
		"and keeps trying to start; its status shows where it is. Fix the cause if it lasts. %s", err, why,
		waitLonger(err, "the timeout (timeouts.create, timeouts.update)"))
}

// notFinishedYet explains a wait for a job's end that stopped while it runs.
func notFinishedYet(err error) string {
	return fmt.Sprintf("The wait %v. The job runs and has not finished; it stays in state as it is, not tainted, and its status "+
		"shows where it is. %s", err, waitLonger(err, "timeouts.create (for a training of this length)"))
}

// notAdmittedYet explains a wait for admission that stopped: Kueue's reason, and what the
// apply did.
func notAdmittedYet(err error, o jobs.Observed) string {
	return fmt.Sprintf("The wait %v. %s. The job stays in state as it is, not tainted, and keeps its place in the "+
		"queue: Kueue admits it when its quota allows; its status and queue_reason show where it is. %s", err,
		cmp.Or(jobs.WhyNotRunning(o), "Kueue has not admitted it"), waitLonger(err, "the quota, or the timeout (timeouts.create, timeouts.update),"))
}

// splitID reads an import ID "namespace/name".
func splitID(id string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(id, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("import ID %q is not of the form NAMESPACE/NAME", id)
	}
	return namespace, name, nil
}
