package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// settle waits as wait_for says, then records the job's status.
// A suspended job is not waited for: it does not run until it is resumed.
func (r *jobResource) settle(ctx context.Context, m jobModel, spec jobs.Spec, action, waitFor string, written *unstructured.Unstructured, diags *diag.Diagnostics) {
	f := m.job()
	w := jobs.RunningWait{Expect: spec.Expect(), FailFast: jobs.FailFast(f.FailFast.ValueString()),
		MinRunning: time.Duration(f.MinRunningSeconds.ValueInt64()) * time.Second, Memory: new(jobs.Memory)}
	if s, ok := m.(suspendable); ok && s.suspended() {
		waitFor = waitCreated
	}
	check := func(o jobs.Observed) (bool, time.Duration, error) { return r.kind.Running(o, w, time.Now()) }
	switch {
	case waitFor == waitSucceeded && action == actionCreate:
		check = func(o jobs.Observed) (bool, time.Duration, error) { return r.kind.Finished(o, w, time.Now()) }
	case waitFor == waitSucceeded:
		waitFor = waitRunning // a rescale or a resume waits until the job runs as it now is
	}
	observed, ok := r.waitOrObserve(ctx, r.target(f), waitFor, action, written, check, diags)
	if !ok {
		return
	}
	status, err := r.kind.Status(observed, time.Now())
	if err != nil {
		diags.AddError("Error reading the status of "+r.target(f).String(), err.Error())
		return
	}
	status.Accelerators = accelerators(ctx, m) // the wait's object holds no pod templates
	diags.Append(f.set(status)...)
}

// waitOrObserve waits as wait_for says, with running deciding when a job runs, and returns what
// it last saw of the job. written is the object as the create or patch returned it: without a
// wait it is the job's state, and pods are listed only after a rescale (a new job has none yet),
// which saves a GET and a LIST per job. A failed wait is reported in diags, and the job is read
// anyway so its status can be recorded: after a timeout ctx is spent, so the read gets a moment
// of its own.
func (r *jobResource) waitOrObserve(ctx context.Context, t kube.Target, waitFor, action string, written *unstructured.Unstructured,
	running kube.Check, diags *diag.Diagnostics) (jobs.Observed, bool) {
	var observed jobs.Observed
	if waitFor == waitCreated && written != nil {
		observed.Object = written
		if action != actionCreate && !r.kind.InstancesFromObject {
			pods, err := r.client.Pods(ctx, t)
			if err != nil {
				diags.AddError("Error reading "+t.String(), err.Error())
				return observed, false
			}
			observed.Pods = pods
		}
		return observed, true
	}
	if waitFor == waitAdmitted {
		var err error
		observed, err = r.client.Until(ctx, t, written, func(o jobs.Observed) (bool, time.Duration, error) {
			if reason := r.kind.Failure(o); reason != "" {
				return false, 0, fmt.Errorf("%s", reason)
			}
			if o.Object == nil {
				return false, 0, nil
			}
			why, recheck := r.kind.Unqueued(o, time.Now())
			if why != "" {
				return false, 0, fmt.Errorf("%s", why)
			}
			return jobs.Admitted(o), recheck, nil
		})
		switch {
		case waitStopped(err):
			diags.AddWarning(stoppedSummary(err, fmt.Sprintf("%s is not admitted yet (%s)", t, action)), notAdmittedYet(err, observed))
		case dispatchedElsewhere(t, action, err, diags):
		case err != nil:
			diags.AddError(fmt.Sprintf("Error waiting for %s to be admitted (%s)", t, action), err.Error())
		}
	}
	if waitFor == waitRunning || waitFor == waitSucceeded {
		var err error
		until := r.client.Until
		if waitFor == waitSucceeded && action == actionCreate {
			until = r.client.UntilEnd // the job's end is followed here, wherever it runs
		}
		observed, err = until(ctx, t, written, running)
		switch {
		case waitStopped(err) && waitFor == waitSucceeded && r.runs(observed):
			diags.AddWarning(stoppedSummary(err, fmt.Sprintf("%s has not finished yet (%s)", t, action)), notFinishedYet(err))
		case waitStopped(err):
			// Not failed, only not running yet (queued, unschedulable, pulling), or Terraform
			// stopped: the job stays in state as it is, untainted, and the warning says why.
			diags.AddWarning(stoppedSummary(err, fmt.Sprintf("%s is not running yet (%s)", t, action)), notRunningYet(err, observed))
		case dispatchedElsewhere(t, action, err, diags):
		case err != nil:
			diags.AddError(fmt.Sprintf("Error waiting for %s to run (%s)", t, action), err.Error())
		}
	}
	if observed.Object != nil {
		return observed, true
	}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	observed, err := r.client.Observe(readCtx, t)
	if err != nil {
		diags.AddError("Error reading "+t.String(), err.Error())
		return observed, false
	}
	if observed.Object == nil {
		diags.AddError(t.Kind+" disappeared", fmt.Sprintf("%s was deleted by someone else while Terraform was working on it.", t))
		return observed, false
	}
	return observed, true
}

// waitDeleted waits until each target object in client's cluster and the pods its selector
// matches are gone; pods
// that a node which is not Ready holds are left to it, with a warning naming them.
func (r *jobResource) waitDeleted(ctx context.Context, client *kube.Client, diags *diag.Diagnostics, targets ...kube.Target) {
	for _, t := range targets {
		observed, stuck, err := client.UntilGone(ctx, t)
		if err == nil {
			if len(stuck) > 0 {
				var names []string
				for _, p := range stuck {
					names = append(names, fmt.Sprintf("pod %s on node %s", p.Name, p.Spec.NodeName))
				}
				diags.AddWarning("Pods left on nodes that are not Ready",
					fmt.Sprintf("%s was deleted, but %s cannot go until their node answers again: no kubelet there confirms the deletion. "+
						"They are left to the node's lifecycle (Kubernetes removes them when the node returns, is deleted, or is tainted "+
						"node.kubernetes.io/out-of-service). To remove them now: kubectl delete pod --force.",
						t, strings.Join(names, ", ")))
			}
			continue
		}
		var left []string
		if observed.Object != nil {
			left = append(left, t.String())
		}
		left = append(left, observed.Owned...)
		for _, p := range observed.Pods {
			left = append(left, "pod "+p.Name)
		}
		diags.AddError("Error waiting for "+t.String()+" to be deleted",
			fmt.Sprintf("%v; still there: %s. Running terraform destroy again resumes the wait.", err, strings.Join(left, ", ")))
		return
	}
}

// dispatchedElsewhere says, with a warning, whether a wait ended because Kueue dispatched the job
// to a worker cluster the provider block does not give: the job is in state as it is, untainted.
func dispatchedElsewhere(t kube.Target, action string, err error, diags *diag.Diagnostics) bool {
	var elsewhere *kube.DispatchedElsewhere
	if !errors.As(err, &elsewhere) {
		return false
	}
	diags.AddWarning(fmt.Sprintf("%s runs in worker cluster %s (%s)", t, elsewhere.Worker, action),
		fmt.Sprintf("The wait ended at once: %v. The job stays in state as it is, not tainted, and its status is MultiKueue's mirror of "+
			"the copy there. Add a worker_cluster block named %q with that cluster's kubeconfig to the provider to follow its pods.", err, elsewhere.Worker))
	return true
}

// runs says whether the kind's operator reports the job running.
func (r *jobResource) runs(o jobs.Observed) bool {
	s, err := r.kind.Status(o, time.Now())
	return err == nil && s.Phase == jobs.Running
}
