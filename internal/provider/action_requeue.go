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

// requeueJobAction sends an admitted job to the back of its Kueue queue: its Workload deactivated
// (Kueue evicts it, its operator stops the pods, its quota is given back to what waits), then
// deleted, so that Kueue makes the job a new one, active, whose creation time puts it behind
// every workload of its priority that waits. (Kueue v0.19.2 orders a ClusterQueue's workloads by
// priority, then by GetQueueOrderTimestamp in pkg/workload: the creation time, but for evictions
// by a PodsReady timeout or an admission check; a Workload deactivated and activated again keeps
// its creation time, and so its place. Deleting a Workload is Kueue's own path: the job
// reconciler suspends the job, drops the Workload's finalizer and, once the job has no pod
// left, makes a new one of the same name: ReconcileGenericJob and handleJobWithNoWorkload in
// pkg/controller/jobframework/reconciler.go.)
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
			"once, for the workloads that wait; then the Workload is deleted, and Kueue makes the job a new one at the back of its queue: " +
			"Kueue orders a queue by priority, then by the Workloads' creation time, so every job of its priority that waits then is admitted " +
			"before it, and it is admitted when it comes first and fits. The job object, its UID and its state stay as they are. " +
			"The action waits until the pods are gone, the quota is free and the new Workload is made, and says whether the job was " +
			"admitted again at once or waits, and why. It refuses, changing nothing, a job that is gone, finished, not queued (no " +
			"`queue_name`: use `training_restart_job`) or not admitted (it waits in its queue already). Interrupted or out of time " +
			"before its pods are gone, it activates the Workload again before it returns, so that no job is left out of its queue; " +
			"once the Workload is deleted, Kueue makes the new one whatever becomes of the action. Needs `patch` and `delete` on " +
			"Workloads (the job resources' role has them). Terraform 1.14 and later.",
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
	old := o.Workload.GetUID()
	wl.BackgroundDeletion = true
	if err := a.client.Delete(ctx, wl, old); err != nil {
		resp.Diagnostics.AddError("Error deleting "+wl.String(), fmt.Sprintf("%v.%s", err, a.undo(wl, kueue.ActivePatch(true), "its Workload is active again, in its place in the queue.")))
		return
	}
	// Kueue makes the new Workload once the old one is gone.
	if _, err := a.client.Until(ctx, t, nil, func(o jobs.Observed) (bool, time.Duration, error) {
		return o.Workload != nil && o.Workload.GetUID() != old, 0, nil
	}); err != nil {
		resp.Diagnostics.AddError("Kueue has not made "+t.String()+" a new Workload", fmt.Sprintf("%v after %s. Its pods stopped and its old "+
			"Workload was deleted; Kueue makes the new one as soon as the old one is gone, and the job waits suspended until then: "+
			"read its status with the data source training_job.", err, time.Since(start).Round(time.Second)))
		return
	}
	progress(resp, "%s: its pods stopped and its quota was given back in %s; it waits at the back of LocalQueue %s", t, stopped, queue)
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
