package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// The suspend actions hold a job's pods back and let them run again, where the job's resource
// leaves suspend unset (suspendUnset): a plain job through its own suspend, a queued job through
// its Workload (deactivated: Kueue evicts it and gives its quota back; activated: Kueue queues
// it again), since a queued job's suspend is Kueue's.

var _ action.ActionWithConfigure = (*suspendJobAction)(nil)

func newSuspendJobAction() action.Action { return &suspendJobAction{suspend: true} }
func newResumeJobAction() action.Action  { return &suspendJobAction{} }

// suspendJobAction is training_suspend_job (suspend) or training_resume_job.
type suspendJobAction struct {
	clientAction
	suspend bool
}

func (a *suspendJobAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_resume_job"
	if a.suspend {
		resp.TypeName = req.ProviderTypeName + "_suspend_job"
	}
}

func (a *suspendJobAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	description := "Resumes a job suspended by `training_suspend_job` (or kubectl): a plain job's operator makes its pods again, and the " +
		"action waits until it runs; a queued job's Workload is activated again, and Kueue admits it when it fits (the action says " +
		"whether it was admitted at once or waits, and why). A job that is not suspended is left as it is. "
	covers := "the job to run again"
	if a.suspend {
		description = "Suspends a job: its operator stops every pod, each with its termination grace (a `checkpoint` is saved), and keeps " +
			"the job; the action waits until the pods are gone. A queued job is suspended through its Workload, deactivated, so that " +
			"Kueue evicts it and gives its quota back; it stays out of its queue until `training_resume_job`. A job suspended " +
			"already is left as it is. "
		covers = "the pods to stop"
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: description + "It refuses, changing nothing, a job that is gone or finished, and an elastic job (FrameworkController " +
			"has no suspend). A job resource whose `suspend` is left unset plans no change afterwards; one that sets it sets it back at the " +
			"next apply, and the plan shows that. Terraform 1.14 and later.",
		Attributes: jobActionAttributes(actionKinds(), restartTimeout, covers),
	}
}

func (a *suspendJobAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	c, cancel, ok := a.start(ctx, req, resp, restartTimeout)
	defer cancel()
	if !ok {
		return
	}
	ctx, kind, t, o, st := c.ctx, c.kind, c.t, c.o, c.st
	verb := map[bool]string{true: "suspend", false: "resume"}[a.suspend]
	patch, err := kind.SuspendPatch(a.suspend)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot "+verb+" "+t.String(), fmt.Sprintf("%v: an elastic job is stopped by destroying it. Nothing was changed.", err))
		return
	case jobs.Finished(st.Phase):
		resp.Diagnostics.AddError("Cannot "+verb+" "+t.String(), fmt.Sprintf("%s has finished (%s). Nothing was changed.", t, st.Phase))
		return
	}
	if jobs.QueueName(o.Object) != "" {
		a.viaWorkload(ctx, resp, t, o)
		return
	}
	if kind.Suspended(o.Object) == a.suspend {
		progress(resp, "%s: %sed already; nothing to do", t, verb)
		return
	}
	start := time.Now()
	written, err := a.client.Patch(ctx, t, k8stypes.MergePatchType, patch)
	if err != nil {
		resp.Diagnostics.AddError("Error "+verb+"ing "+t.String(), err.Error())
		return
	}
	a.until(ctx, resp, kind, t, written, start)
}

// until waits until the job's pods are gone (suspend) or it runs (resume).
func (a *suspendJobAction) until(ctx context.Context, resp *action.InvokeResponse, kind *jobs.Kind, t kube.Target, written *unstructured.Unstructured, start time.Time) {
	check := runsAgain(kind)
	if a.suspend {
		check = func(o jobs.Observed) (bool, time.Duration, error) { return len(o.Pods) == 0, 0, nil }
	}
	_, err := a.client.Until(ctx, t, written, check)
	if err != nil {
		what := map[bool]string{true: "Its pods did not all stop", false: "It did not run again"}[a.suspend]
		resp.Diagnostics.AddError(t.String()+": "+what, fmt.Sprintf("%v after %s. The job stays %s.", err, time.Since(start).Round(time.Second),
			map[bool]string{true: "suspended: its operator goes on stopping its pods", false: "resumed: its operator goes on making its pods"}[a.suspend]))
		return
	}
	progress(resp, "%s: %s in %s", t, map[bool]string{true: "its pods stopped", false: "running"}[a.suspend], time.Since(start).Round(time.Second))
}

// viaWorkload suspends or resumes a queued job through its Workload's spec.active.
func (a *suspendJobAction) viaWorkload(ctx context.Context, resp *action.InvokeResponse, t kube.Target, o jobs.Observed) {
	if o.Workload == nil {
		resp.Diagnostics.AddError("Cannot act on "+t.String(), "Kueue has not made its Workload yet. Nothing was changed.")
		return
	}
	active, found, _ := unstructured.NestedBool(o.Workload.Object, "spec", "active")
	if (!found || active) != a.suspend {
		progress(resp, "%s: its Workload is %s already; nothing to do", t, map[bool]string{true: "deactivated", false: "active"}[a.suspend])
		return
	}
	wl := kube.Target{GVR: kueue.WorkloadGVR, Kind: "Workload", Namespace: t.Namespace, Name: o.Workload.GetName()}
	start := time.Now()
	if _, err := a.client.Patch(ctx, wl, k8stypes.MergePatchType, kueue.ActivePatch(!a.suspend)); err != nil {
		resp.Diagnostics.AddError("Error patching "+wl.String(), err.Error())
		return
	}
	if !a.suspend {
		if o, err := a.client.Observe(ctx, t); err == nil && o.Workload != nil {
			if w := kueue.ReadWorkload(o.Workload); w.Admitted {
				progress(resp, "%s: admitted again", t)
			} else {
				progress(resp, "%s: back in its queue; it waits: %s", t, w.Reason)
			}
		}
		return
	}
	_, err := a.client.Until(ctx, t, nil, func(o jobs.Observed) (bool, time.Duration, error) {
		return len(o.Pods) == 0 && o.Workload != nil && !kueue.HoldsQuota(o.Workload), 0, nil
	})
	if err != nil {
		resp.Diagnostics.AddError(t.String()+": its pods did not all stop", fmt.Sprintf("%v after %s. Its Workload stays deactivated: Kueue goes on "+
			"evicting it.", err, time.Since(start).Round(time.Second)))
		return
	}
	progress(resp, "%s: its pods stopped and its quota was given back in %s; it stays out of its queue until training_resume_job", t,
		time.Since(start).Round(time.Second))
}
