package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

var _ action.ActionWithConfigure = (*requeueJobAction)(nil)

func newRequeueJobAction() action.Action { return &requeueJobAction{} }

// requeueJobAction sends an admitted job back to its Kueue queue: its Workload deactivated (Kueue
// evicts it, its operator stops the pods, its quota is given back), then activated again (Kueue
// queues it and admits it when it fits).
type requeueJobAction struct{ clientAction }

// requeueTimeout is the requeue's default: the pods' stop (a checkpoint's save).
const requeueTimeout = 30 * time.Minute

func (a *requeueJobAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_requeue_job"
}

func (a *requeueJobAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Sends a job Kueue admitted back to its queue: its Workload is deactivated, so that Kueue evicts it " +
			"(its operator stops every pod, each with its termination grace: a `checkpoint` is saved) and gives its quota back at " +
			"once, for the workloads that wait; then it is activated again, and Kueue admits it when it fits, as any job of the queue. It keeps " +
			"its place in the queue's order (Kueue orders by priority, then creation time), so what waits behind it is admitted only if Kueue " +
			"gets to it while the pods stop; to let a job go first for sure, give it a higher priority or suspend this one. " +
			"The action waits until the pods are gone and the quota is free, and says whether the job was admitted again at once or " +
			"waits, and why. It refuses, changing nothing, a job that is gone, finished, not queued (no `queue_name`: use " +
			"`training_restart_job`) or not admitted (it waits in its queue already). Interrupted or out of time after the " +
			"deactivation, it activates the Workload again before it returns, so that no job is left out of its queue. Needs `patch` " +
			"on Workloads (the job resources' role has it). Terraform 1.14 and later.",
		Attributes: jobActionAttributes(actionKinds(), requeueTimeout, "the pods to stop and the quota to be given back"),
	}
}

func (a *requeueJobAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	c, cancel, ok := a.start(ctx, req, resp, requeueTimeout)
	defer cancel()
	if !ok {
		return
	}
	ctx, t, o, st := c.ctx, c.t, c.o, c.st
	queue := jobs.QueueName(o.Object)
	switch {
	case queue == "":
		resp.Diagnostics.AddError("Cannot requeue "+t.String(), t.String()+" is not queued by Kueue (it has no queue_name): restart it with the "+
			"action training_restart_job. Nothing was changed.")
		return
	case jobs.Finished(st.Phase):
		resp.Diagnostics.AddError("Cannot requeue "+t.String(), fmt.Sprintf("%s has finished (%s): run it again with terraform apply -replace=ADDRESS. "+
			"Nothing was changed.", t, st.Phase))
		return
	case o.Workload == nil || !kueue.HoldsQuota(o.Workload):
		why := "Kueue has not made its Workload yet"
		if o.Workload != nil {
			why = kueue.ReadWorkload(o.Workload).Reason
		}
		resp.Diagnostics.AddError("Cannot requeue "+t.String(), fmt.Sprintf("%s is not admitted: it waits in LocalQueue %s already (%s). Nothing was changed.",
			t, queue, why))
		return
	}
	wl := kube.Target{GVR: kueue.WorkloadGVR, Kind: "Workload", Namespace: t.Namespace, Name: o.Workload.GetName()}
	start := time.Now()
	progress(resp, "%s: deactivating its Workload %s, so that Kueue evicts it and its %d pods stop, each with its grace", t, wl.Name, len(o.Pods))
	if _, err := a.client.Patch(ctx, wl, k8stypes.MergePatchType, kueue.ActivePatch(false)); err != nil {
		resp.Diagnostics.AddError("Error deactivating "+wl.String(), err.Error()+". Nothing was changed.")
		return
	}
	_, err := a.client.Until(ctx, t, nil, func(o jobs.Observed) (bool, time.Duration, error) {
		return len(o.Pods) == 0 && o.Workload != nil && !kueue.HoldsQuota(o.Workload), 0, nil
	})
	if err != nil {
		resp.Diagnostics.AddError("The pods of "+t.String()+" did not stop", fmt.Sprintf("%v after %s.%s", err, time.Since(start).Round(time.Second),
			a.undo(wl, kueue.ActivePatch(true), "its Workload is active again and back in its queue.")))
		return
	}
	stopped := time.Since(start).Round(time.Second)
	if _, err := a.client.Patch(ctx, wl, k8stypes.MergePatchType, kueue.ActivePatch(true)); err != nil {
		resp.Diagnostics.AddError("Error activating "+wl.String()+" again", fmt.Sprintf("%v.%s", err, a.undo(wl, kueue.ActivePatch(true), "its Workload is active again.")))
		return
	}
	progress(resp, "%s: its pods stopped and its quota was given back in %s; its Workload is back in LocalQueue %s", t, stopped, queue)
	// What Kueue makes of it now: admitted again at once (the quota it freed is still free), or
	// waiting behind what it let in.
	if o, err = a.client.Observe(ctx, t); err == nil && o.Workload != nil {
		if w := kueue.ReadWorkload(o.Workload); w.Admitted {
			progress(resp, "%s: admitted again", t)
		} else {
			progress(resp, "%s: waits in its queue: %s", t, w.Reason)
		}
	}
}
