package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// delete deletes the job object Terraform made (by UID), with its TensorBoard, and waits within
// the delete timeout until they, their pods and what the operator made for the job are gone.
// Its dependents (an elastic job's Services) are deleted by name too, as an imported job's may
// have no owner reference; but only those that are the job's, owned by it or made by this
// provider: one of that name that is somebody else's is left alone, with a warning.
func (r *jobResource) delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse, m jobModel) {
	resp.Diagnostics.Append(getModel(ctx, req.State, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := m.job()
	deleteDefault := defaultTimeout
	if g, ok := m.(withGracePeriod); ok {
		deleteDefault += g.gracePeriod()
	}
	// The pods' own grace: a checkpoint's save may take most of it.
	deleteDefault += r.podsGrace(ctx, m)
	limit, diags := f.Timeouts.Delete(ctx, deleteDefault)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := r.target(f)
	if moved, ok := movedTarget(movedFromOf(ctx, req.Private, &resp.Diagnostics), f); ok {
		t = moved // the job a moved state still holds (train_job_move.go)
	}
	t.UID = k8stypes.UID(f.UID.ValueString())
	// A job Kueue dispatched runs as a copy in a worker cluster, which Kueue deletes once the
	// job here is gone: destroy waits for that too, so that it leaves nothing in either cluster.
	worker := f.WorkerCluster.ValueString()
	if worker == "" {
		var err error
		if worker, err = r.client.DispatchedTo(ctx, t); err != nil {
			resp.Diagnostics.AddError("Error deleting "+t.String(), err.Error())
			return
		}
	}
	stopStart := time.Now()
	if err := r.client.Delete(ctx, t, t.UID); err != nil {
		resp.Diagnostics.AddError("Error deleting "+t.String(), err.Error())
		return
	}
	targets := deletionTargets(m, t)
	for _, d := range r.kind.Dependents(t.Name) {
		dependent := dependentTarget(t, d)
		left, err := r.client.DeleteIf(ctx, dependent, r.theJobs(t, d))
		if err != nil {
			resp.Diagnostics.AddError("Error deleting "+dependent.String(), err.Error())
			return
		}
		if left != nil {
			resp.Diagnostics.AddWarning(dependent.Kind+" left in place",
				fmt.Sprintf("%s was not created by this provider and is not owned by %s, so destroy did not delete it.", dependent, t))
			continue
		}
		targets = append(targets, dependent)
	}
	r.waitDeleted(ctx, r.client, &resp.Diagnostics, targets...)
	if !resp.Diagnostics.HasError() {
		r.secrets().delete(ctx, t, writeOnlyOf(m), &resp.Diagnostics)
	}
	if !resp.Diagnostics.HasError() {
		sayStopped(&resp.Diagnostics, t.String(), m.pod(), time.Since(stopStart))
	}
	if worker == "" || resp.Diagnostics.HasError() {
		return
	}
	w := r.client.Worker(worker)
	if w == nil {
		resp.Diagnostics.AddWarning("The copy in worker cluster "+worker+" was not waited for",
			fmt.Sprintf("%s ran as a copy in the MultiKueue worker cluster %s, which the provider block does not give (worker_cluster), so "+
				"destroy could not confirm that the copy and its pods are gone there. Kueue deletes them once the job here is gone.", t, worker))
		return
	}
	r.waitDeleted(ctx, w, &resp.Diagnostics, kube.WorkerCopy(t))
}

// podsGrace is the grace the job's pods have: the job's, or where it sets none, its runtime's (a
// TrainJob's pods take theirs from the runtime), read now; zero when none can be known.
func (r *jobResource) podsGrace(ctx context.Context, m jobModel) time.Duration {
	if g := m.pod().GracePeriod; !g.IsNull() && !g.IsUnknown() {
		return time.Duration(g.ValueInt64()) * time.Second
	}
	p, ok := m.(runtimePlaced)
	if !ok || r.client == nil {
		return 0
	}
	obj, err := p.runtime(ctx, r.client)
	if err != nil || obj == nil {
		return 0
	}
	runtime, err := jobs.ReadRuntime(obj)
	if err != nil || runtime.Pod.TerminationGracePeriod == nil {
		return 0
	}
	return time.Duration(*runtime.Pod.TerminationGracePeriod) * time.Second
}
