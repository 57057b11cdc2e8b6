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
)

var _ action.ActionWithConfigure = (*restartJobAction)(nil)

func newRestartJobAction() action.Action { return &restartJobAction{} }

// restartJobAction restarts a running job in place (jobs.RestartPatches): suspended, so that
// its operator stops every pod with its grace (a checkpoint is saved), then resumed.
type restartJobAction struct{ clientAction }

// restartTimeout is the restart's default: the pods' stop (a checkpoint's save) and start.
const restartTimeout = 30 * time.Minute

func (a *restartJobAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_restart_job"
}

func (a *restartJobAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Restarts a running job in place, from its checkpoint: its operator stops every pod, each with its " +
			"termination grace (the time a `checkpoint` gives its save), and makes them again. The job object, its UID and its " +
			"state in Terraform stay as they are. It suspends the job and resumes it once its pods are gone (mpi-operator, " +
			"training-operator and Trainer stop and make the pods; the program resumes from its checkpoint if it loads one on start), " +
			"and waits until the job runs again. It refuses, changing nothing, a job that is gone, finished or suspended, a job Kueue " +
			"queues (its suspend is Kueue's: use `training_requeue_job`), and an elastic job (FrameworkController has no suspend; " +
			"its workers restart by themselves when one stops). Interrupted or out of time after the suspend, it resumes the job " +
			"before it returns, so that no job is left suspended. Terraform 1.14 and later.",
		Attributes: jobActionAttributes(actionKinds(), restartTimeout, "the pods to stop and the job to run again"),
	}
}

func (a *restartJobAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	c, cancel, ok := a.start(ctx, req, resp, restartTimeout)
	defer cancel()
	if !ok {
		return
	}
	ctx, kind, t, o := c.ctx, c.kind, c.t, c.o
	suspend, resume, err := kind.RestartPatches(o.Object, c.st.Phase)
	if err != nil {
		resp.Diagnostics.AddError("Cannot restart "+t.String(), err.Error()+". Nothing was changed.")
		return
	}
	start := time.Now()
	progress(resp, "%s: suspending it, so that its operator stops its %d pods, each with its grace", t, len(o.Pods))
	written, err := a.client.Patch(ctx, t, k8stypes.MergePatchType, suspend)
	if err != nil {
		resp.Diagnostics.AddError("Error suspending "+t.String(), err.Error()+". Nothing was changed.")
		return
	}
	_, err = a.client.Until(ctx, t, written, func(o jobs.Observed) (bool, time.Duration, error) { return len(o.Pods) == 0, 0, nil })
	if err != nil {
		resp.Diagnostics.AddError("The pods of "+t.String()+" did not stop", fmt.Sprintf("%v after %s.%s", err, time.Since(start).Round(time.Second),
			a.undo(t, resume, "the job is resumed, and its operator makes the pods that were stopped again.")))
		return
	}
	stopped := time.Since(start).Round(time.Second)
	progress(resp, "%s: its pods stopped in %s; resuming it", t, stopped)
	if written, err = a.client.Patch(ctx, t, k8stypes.MergePatchType, resume); err != nil {
		resp.Diagnostics.AddError("Error resuming "+t.String(), fmt.Sprintf("%v.%s", err, a.undo(t, resume, "the job is resumed.")))
		return
	}
	a.untilRunning(ctx, resp, kind, t, written, start, stopped)
}

// untilRunning waits until the restarted job runs again.
func (a *restartJobAction) untilRunning(ctx context.Context, resp *action.InvokeResponse, kind *jobs.Kind, t kube.Target, written *unstructured.Unstructured,
	start time.Time, stopped time.Duration) {
	_, err := a.client.Until(ctx, t, written, runsAgain(kind))
	if err != nil {
		resp.Diagnostics.AddError(t.String()+" did not run again", fmt.Sprintf("Its pods stopped in %s and it was resumed, but %v after %s. "+
			"It is not suspended: its operator goes on making its pods.", stopped, err, time.Since(start).Round(time.Second)))
		return
	}
	progress(resp, "%s: running again, %s after the restart began (its pods took %s to stop)", t, time.Since(start).Round(time.Second), stopped)
}
