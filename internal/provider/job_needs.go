package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// What a job needs besides itself (its kind's operator, its LocalQueue, its runtime) may be made
// by the same apply without a reference Terraform could order the job by: a helm_release that
// installs the operator, a queue or runtime of another module. The plan cannot check the job
// against what is not there yet and says so; the create waits for it, a little, before it fails.

// needWait bounds how long a create waits for what the job needs to appear: long enough for a
// chart's CRDs, a queue or a runtime made beside the job, short enough that a name spelt wrong
// fails the apply soon.
const needWait = time.Minute

// needSeconds is needWait as the messages say it.
const needSeconds = int(needWait / time.Second)

// needPoll is how often the wait looks again.
const needPoll = 2 * time.Second

// awaitNeed looks until there says the need is there, or errs, or needWait runs out: not found
// and no error is a wait that ran out. When ctx ends first (Terraform interrupted the apply, or
// the create's timeout ran out), the error is a needInterrupted: the need was not waited out, so
// nothing may be said of it.
func awaitNeed(ctx context.Context, there func(context.Context) (bool, error)) (found bool, err error) {
	err = wait.PollUntilContextTimeout(ctx, needPoll, needWait, true, there)
	if ctx.Err() != nil {
		return false, needInterrupted{cause: ctx.Err()}
	}
	if wait.Interrupted(err) {
		return false, nil
	}
	return err == nil, err
}

// needInterrupted is a wait for what the job needs that its context ended.
type needInterrupted struct{ cause error }

func (e needInterrupted) Error() string {
	if errors.Is(e.cause, context.DeadlineExceeded) {
		return "the create timeout ran out"
	}
	return "Terraform interrupted the apply"
}

// interruptedWaiting reports, on at, a create that stopped while it waited for what; it says
// whether err is such a stop.
func interruptedWaiting(at path.Path, what string, err error, diags *diag.Diagnostics) bool {
	var stopped needInterrupted
	if !errors.As(err, &stopped) {
		return false
	}
	diags.AddAttributeError(at, "Create stopped while waiting for "+what,
		fmt.Sprintf("The create waited for %s, which this apply may be making, until %s. Nothing was created; "+
			"the next apply creates the job.", what, stopped))
	return true
}

// waitedForIt is what a create's error adds once it has waited out needWait for what is missing.
var waitedForIt = fmt.Sprintf(" The create waited %d seconds for it, in case this apply makes it.", needSeconds)

// awaitServed waits until the cluster serves the job's kind: its operator may be installed by
// this apply. One the cluster serves at other versions only (an older release installed) is not
// waited for: the plan has said so.
func (r *jobResource) awaitServed(ctx context.Context, diags *diag.Diagnostics) bool {
	return awaitServed(ctx, r.client, r.kind.GVR, path.Empty(), diags)
}

func awaitServed(ctx context.Context, c *kube.Client, gvr schema.GroupVersionResource, at path.Path, diags *diag.Diagnostics) bool {
	var last error
	serves := c.Serves // what this process read already, then the cluster anew
	found, err := awaitNeed(ctx, func(ctx context.Context) (bool, error) {
		last, serves = serves(ctx, gvr), c.ServesNow
		var notServed *kube.NotServedError
		if errors.As(last, &notServed) && len(notServed.Served) == 0 {
			return false, nil
		}
		return true, nil
	})
	if err == nil && found && last != nil {
		err = last
	}
	switch {
	case interruptedWaiting(at, "the cluster to serve "+gvr.GroupResource().String(), err, diags):
		return false
	case err != nil:
		diags.AddAttributeError(at, "The cluster does not serve "+gvr.GroupResource().String(), err.Error()+" Nothing was created.")
		return false
	case !found:
		diags.AddAttributeError(at, "The cluster does not serve "+gvr.GroupResource().String(),
			fmt.Sprintf("%v The create waited %d seconds for it, in case this apply installs it. Nothing was created.", last, needSeconds))
		return false
	}
	return true
}

// awaitQueue waits until the job's LocalQueue exists, then says whether it does (noQueue says
// what the namespace has instead).
func (r *jobResource) awaitQueue(ctx context.Context, namespace, queue string, diags *diag.Diagnostics) bool {
	if !awaitServed(ctx, r.client, kueue.LocalQueueGVR, path.Root("queue_name"), diags) {
		return false
	}
	q := kube.Target{GVR: kueue.LocalQueueGVR, Kind: "LocalQueue", Namespace: namespace, Name: queue}
	found, err := awaitNeed(ctx, func(ctx context.Context) (bool, error) {
		obj, err := r.client.Get(ctx, q)
		return obj != nil, err
	})
	switch {
	case interruptedWaiting(path.Root("queue_name"), q.String(), err, diags):
		return false
	case err != nil:
		diags.AddAttributeError(path.Root("queue_name"), "Error reading "+q.String(), err.Error())
		return false
	case found:
		return true
	}
	r.noQueue(ctx, namespace, queue, diags)
	return false
}
