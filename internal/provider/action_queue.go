package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/actionvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// The queue actions stop and resume a Kueue queue's admissions for a maintenance window (its
// stopPolicy), as the queue's status then says. training_cluster_queue's and
// training_local_queue's stop_policy, left unset, is not drift: the plan keeps what an action
// set; set, it is Terraform's, and the next apply sets it back (the plan shows it).

var (
	_ action.ActionWithConfigure        = (*queueAction)(nil)
	_ action.ActionWithConfigValidators = (*queueAction)(nil)
)

func newStopQueueAction() action.Action   { return &queueAction{stop: true} }
func newResumeQueueAction() action.Action { return &queueAction{} }

// queueAction is training_stop_queue (stop) or training_resume_queue.
type queueAction struct {
	clientAction
	stop bool
}

// queueActionModel is what both queue actions are given; the stop's drain is read on its own.
type queueActionModel struct {
	ClusterQueue types.String `tfsdk:"cluster_queue"`
	LocalQueue   types.String `tfsdk:"local_queue"`
	Namespace    types.String `tfsdk:"namespace"`
	Timeout      types.String `tfsdk:"timeout"`
}

// queueTimeout is the queue actions' default: Kueue's status, and a drain's evictions.
const queueTimeout = 10 * time.Minute

func (a *queueAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_resume_queue"
	if a.stop {
		resp.TypeName = req.ProviderTypeName + "_stop_queue"
	}
}

func (a *queueAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"cluster_queue": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "The ClusterQueue: every LocalQueue that submits to it. Exactly one of `cluster_queue` and `local_queue`."},
		"local_queue": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "The LocalQueue: one namespace's door to its ClusterQueue."},
		"namespace": schema.StringAttribute{Optional: true, Validators: []validator.String{namespaceRule},
			MarkdownDescription: "Namespace of `local_queue`. Default `default`."},
		"timeout": schema.StringAttribute{Optional: true, Validators: []validator.String{durationRule},
			MarkdownDescription: fmt.Sprintf("How long the action waits for Kueue to say it took effect, as a Go duration. Default `%s`.", shortDuration(queueTimeout))},
	}
	description := "Resumes a Kueue queue's admissions (its `stopPolicy` back to `None`) and waits until Kueue says it is active again. " +
		"A queue inactive for another reason (a missing flavor) is reported with it. "
	if a.stop {
		attrs["drain"] = schema.BoolAttribute{Optional: true,
			MarkdownDescription: "Also evict what the queue admitted (`HoldAndDrain`): their pods stop, each with its grace, and their jobs wait in " +
				"the queue until it resumes. Default false (`Hold`: what runs goes on)."}
		description = "Stops a Kueue queue's admissions for a maintenance window (its `stopPolicy`: `Hold`, or `HoldAndDrain` with `drain`) and " +
			"waits until Kueue says it is stopped (its `Active` condition, reason `Stopped`), and with `drain` until it holds no quota. " +
			"Jobs submitted meanwhile wait in it; `training_resume_queue` lets them in. "
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: description + "A `training_cluster_queue` or `training_local_queue` whose `stop_policy` is left unset plans no " +
			"change afterwards; one that sets it sets it back at the next apply, and the plan shows that. Needs `patch` on the queue " +
			"(the role of the queue's resource). Terraform 1.14 and later.",
		Attributes: attrs,
	}
}

func (a *queueAction) ConfigValidators(context.Context) []action.ConfigValidator {
	return []action.ConfigValidator{actionvalidator.ExactlyOneOf(path.MatchRoot("cluster_queue"), path.MatchRoot("local_queue"))}
}

func (a *queueAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m queueActionModel
	var drainValue types.Bool
	for name, v := range map[string]any{"cluster_queue": &m.ClusterQueue, "local_queue": &m.LocalQueue, "namespace": &m.Namespace, "timeout": &m.Timeout} {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(name), v)...)
	}
	if a.stop {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("drain"), &drainValue)...)
	}
	timeout := actionTimeout(m.Timeout.ValueString(), queueTimeout, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	t := kube.Target{GVR: kueue.ClusterQueueGVR, Kind: "ClusterQueue", Name: m.ClusterQueue.ValueString()}
	if m.LocalQueue.ValueString() != "" {
		namespace := m.Namespace.ValueString()
		if namespace == "" {
			namespace = "default"
		}
		t = kube.Target{GVR: kueue.LocalQueueGVR, Kind: "LocalQueue", Namespace: namespace, Name: m.LocalQueue.ValueString()}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	policy, drain := kueue.StopPolicies[0], drainValue.ValueBool()
	if a.stop {
		policy = kueue.StopPolicies[1]
		if drain {
			policy = kueue.StopPolicies[2]
		}
	}
	if _, err := a.client.Patch(ctx, t, k8stypes.MergePatchType, kueue.StopPatch(policy)); err != nil {
		resp.Diagnostics.AddError("Error setting the stop policy of "+t.String(), goneOr(t, err))
		return
	}
	progress(resp, "%s: stopPolicy %s; waiting for Kueue", t, policy)
	stopped := func(st kueue.QueueStatus) bool { return !st.Active && strings.HasPrefix(st.Reason, "Stopped") }
	obj, err := a.client.UntilObject(ctx, t, func(obj *unstructured.Unstructured) bool {
		st := kueue.ReadQueueStatus(obj)
		if !a.stop {
			return !stopped(st)
		}
		return stopped(st) && (!drain || st.Reserving == 0 && st.Admitted == 0)
	})
	if err != nil {
		last := ""
		if obj != nil {
			st := kueue.ReadQueueStatus(obj)
			last = fmt.Sprintf(" Kueue last said: active %v (%s), %d workloads admitted, %d holding quota.", st.Active, st.Reason, st.Admitted, st.Reserving)
		}
		resp.Diagnostics.AddError(t.String()+" did not take its stop policy", fmt.Sprintf("Its stopPolicy is %s, but %v.%s", policy, err, last))
		return
	}
	st := kueue.ReadQueueStatus(obj)
	switch {
	case a.stop:
		progress(resp, "%s: stopped; %d workloads wait in it", t, st.Pending)
	case !st.Active:
		resp.Diagnostics.AddWarning(t.String()+" is resumed but not active", fmt.Sprintf("Its stopPolicy is None again, but Kueue says it "+
			"is inactive for another reason: %s.", st.Reason))
	default:
		progress(resp, "%s: admitting again; %d workloads wait in it", t, st.Pending)
	}
}
