package jobs

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// RunningWait is what a wait for a job to run asks of it.
type RunningWait struct {
	// Expect is the number of pods of each role (by the kind's RoleLabel) of the running job.
	Expect map[string]int
	// FailFast says which of the pods' troubles end the wait at once (PodFailure).
	FailFast FailFast
	// MinRunning is how long every container of the expected pods must have run since it last
	// started: a program that exits in its first seconds is not taken for a running job.
	MinRunning time.Duration
	// Memory is the wait's memory of the job between its looks (nil: a wait of one look, which
	// sees every trouble for the first time).
	Memory *Memory
}

// Running says whether the job runs as w expects at now: its operator reports it running, each
// role has exactly the expected number of pods Running and none left over (so a rescale is done
// when the removed ones are gone), and their every container has run for w.MinRunning since it
// last started; for a kind whose object lists its tasks, each of those runs too. A job that
// finished before a wait saw it run counts as having run. It fails, with the reason, on a job
// that failed (with how its programs exited), that its operator refused or that is being
// deleted, and as w.FailFast says on a pod that cannot run (PodFailure). When not done, recheck
// is how long until the answer may change though nothing does (zero: only a change can change
// it).
func (k *Kind) Running(o Observed, w RunningWait, now time.Time) (done bool, recheck time.Duration, err error) {
	s, seen, recheck, err := k.waitedStatus(o, w, now)
	if err != nil || !seen {
		return false, recheck, err
	}
	return k.runs(o, s, w, now, recheck)
}

// runs is Running's verdict on the job's status s, as seen.
func (k *Kind) runs(o Observed, s Status, w RunningWait, now time.Time, recheck time.Duration) (bool, time.Duration, error) {
	if s.Phase == Succeeded {
		return true, 0, nil
	}
	if s.Phase != Running || !Admitted(o) {
		// A queued job runs once Kueue has admitted it; one Kueue does not manage never is
		// (Unqueued says so).
		return false, recheck, nil
	}
	for role, n := range w.Expect {
		if running, total := RunningCount(o.Pods, k.RoleLabel, role); running != n || total != n {
			return false, recheck, nil
		}
	}
	if k.InstancesFromObject {
		tasks := map[string]int{}
		for _, in := range s.Instances {
			if in.Phase != string(corev1.PodRunning) {
				return false, recheck, nil
			}
			tasks[in.Role]++
		}
		for role, n := range w.Expect {
			if tasks[role] != n {
				return false, recheck, nil
			}
		}
	}
	if left := k.runningFor(o.Pods, w, now); left > 0 {
		return false, soonest(recheck, left), nil
	}
	return true, 0, nil
}

// Finished says whether the job has run to its end (wait_for = "succeeded"): done when its
// operator reports it succeeded; failed, with the reason, when its operator fails it (with how
// its programs exited), and, until the job has first run as Running says, as w.FailFast says of
// its pods. From then on a worker that exits, restarts or is rescheduled is its operator's to
// retry within its backoff limit: only the operator's verdict ends the wait.
func (k *Kind) Finished(o Observed, w RunningWait, now time.Time) (done bool, recheck time.Duration, err error) {
	s, seen, recheck, err := k.waitedStatus(o, w, now)
	if err != nil || !seen {
		return false, recheck, err
	}
	if s.Phase == Succeeded {
		return true, 0, nil
	}
	if w.Memory != nil && !w.Memory.ran {
		runs, after, _ := k.runs(o, s, w, now, recheck)
		if !runs {
			return false, after, nil
		}
		w.Memory.markRan(o.Pods)
	}
	return false, 0, nil
}

// waitedStatus is the job's status as a wait sees it (seen false while its object is not there
// yet), or the error that ends the wait: the job failed (with how its programs exited), it is
// being deleted, Kueue does not manage it though it is queued (Unqueued), or, as w.FailFast says
// and until the job has run, one of its pods cannot run.
// recheck is when a pod's trouble may have become permanent though nothing changes.
func (k *Kind) waitedStatus(o Observed, w RunningWait, now time.Time) (s Status, seen bool, recheck time.Duration, err error) {
	if reason := k.failure(o); reason != "" {
		if exits := ProgramExits(o.Pods); exits != "" {
			reason += "\n" + exits
		}
		return Status{}, false, 0, fmt.Errorf("%s", reason)
	}
	if w.FailFast != FailFastNever && !w.Memory.Ran() {
		m := w.Memory
		if m == nil {
			m = new(Memory)
		}
		var failure string
		if failure, recheck = m.PodFailure(o.Pods, now); failure != "" {
			return Status{}, false, 0, fmt.Errorf("%s", failure)
		}
	}
	if o.Object == nil {
		return Status{}, false, recheck, nil
	}
	unqueued, after := k.Unqueued(o, now)
	if unqueued != "" {
		return Status{}, false, 0, fmt.Errorf("%s", unqueued)
	}
	recheck = soonest(recheck, after)
	if o.Object.GetDeletionTimestamp() != nil {
		return Status{}, false, 0, fmt.Errorf("the %s is being deleted", k.Object)
	}
	s, err = k.status(o, time.Time{})
	if err != nil {
		return Status{}, false, 0, err
	}
	return s, true, recheck, nil
}

// runningFor is how much longer the expected roles' containers must run before every one of them
// has run w.MinRunning since it last started; zero once they have.
func (k *Kind) runningFor(pods []corev1.Pod, w RunningWait, now time.Time) time.Duration {
	var left time.Duration
	for _, p := range pods {
		if _, expected := w.Expect[p.Labels[k.RoleLabel]]; !expected || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			r := c.State.Running
			if r == nil {
				return w.MinRunning // restarting: it must run the whole time again
			}
			if l := r.StartedAt.Add(w.MinRunning).Sub(now); l > left {
				left = l
			}
		}
	}
	return left
}

// soonest is the earlier of two waits, zero standing for none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || b > 0 && b < a {
		return b
	}
	return a
}
