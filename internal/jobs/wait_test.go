package jobs

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A grace counts from when the wait first saw the trouble, not from when the pod was scheduled:
// a pod that spent ten minutes pulling a large image and then meets a missing Secret still gets
// the Secret's whole grace. A crash loop counts the restarts since the wait first saw the
// container, not over the pod's life.
func TestAGraceAndARestartCountStartWhenTheWaitFirstSeesThem(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	scheduled := t0.Add(-10 * time.Minute)
	m := new(Memory)
	missing := podWith(false, waitingStatus("CreateContainerConfigError", `secret "wandb" not found`, 0), scheduled)
	if got, next := m.PodFailure([]corev1.Pod{missing}, t0); got != "" || next != MissingGrace {
		t.Errorf("first sight: %q, next look in %s; want none, in %s", got, next, MissingGrace)
	}
	if got, _ := m.PodFailure([]corev1.Pod{missing}, t0.Add(MissingGrace-time.Second)); got != "" {
		t.Errorf("within the grace from the first sight: %q", got)
	}
	if got, _ := m.PodFailure([]corev1.Pod{missing}, t0.Add(MissingGrace)); !strings.Contains(got, `secret "wandb" not found`) {
		t.Errorf("past the grace from the first sight: %q", got)
	}

	// A worker restarted 5 times on its first day, crash-looping on the third.
	m = new(Memory)
	loop := func(restarts int32) []corev1.Pod {
		s := waitingStatus("CrashLoopBackOff", "back-off 5m0s", restarts)
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: "NCCL error\n"}
		return []corev1.Pod{podWith(false, s, scheduled)}
	}
	for restarts := int32(5); restarts < 5+CrashLoopRestarts; restarts++ {
		if got, _ := m.PodFailure(loop(restarts), t0); got != "" {
			t.Errorf("%d restarts, %d since the wait first saw the container: %q", restarts, restarts-5, got)
		}
	}
	if got, _ := m.PodFailure(loop(5+CrashLoopRestarts), t0); !strings.Contains(got, "NCCL error") {
		t.Errorf("%d restarts since the wait first saw the container: %q, want the crash loop", CrashLoopRestarts, got)
	}
}

// Under wait_for = "succeeded" the pods' troubles fail the wait only until the job has first run
// as a running wait expects; from then on a worker that exits, crash-loops or waits for its
// image again is the operator's to retry, and only the operator's verdict ends the wait.
func TestFinishedLeavesAJobThatRanToItsOperator(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	obj, err := NewTFJob(TFJobSpec{Name: "job", Namespace: "default", Workers: 1, Pod: PodOptions{Image: "i"}})
	if err != nil {
		t.Fatal(err)
	}
	obj.Object["status"] = map[string]any{"conditions": []any{condition("Running")}}
	worker := func(s corev1.ContainerStatus, phase corev1.PodPhase) []corev1.Pod {
		s.Name = "tensorflow"
		p := podWith(false, s, t0)
		p.Labels = map[string]string{ReplicaTypeLabel: "worker"}
		p.Status.Phase = phase
		return []corev1.Pod{p}
	}
	running := worker(corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}},
		corev1.PodRunning)
	crashing := func(restarts int32) []corev1.Pod {
		s := waitingStatus("CrashLoopBackOff", "back-off 40s", restarts)
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: "connection reset by peer\n"}
		return worker(s, corev1.PodRunning)
	}
	w := RunningWait{Expect: map[string]int{"worker": 1}, FailFast: FailFastPermanent, MinRunning: 10 * time.Second}

	// Before it has run, a crash loop is the program's failure.
	w.Memory = new(Memory)
	for restarts := int32(0); restarts < CrashLoopRestarts; restarts++ {
		if _, _, err := TF.Finished(Observed{Object: obj, Pods: crashing(restarts)}, w, t0); err != nil {
			t.Fatalf("%d restarts: %v", restarts, err)
		}
	}
	if _, _, err := TF.Finished(Observed{Object: obj, Pods: crashing(CrashLoopRestarts)}, w, t0); err == nil {
		t.Error("a crash loop before the job ever ran did not fail the wait")
	}

	// Once it has run MinRunning, the same crash loop, an image pulled again and a pod whose
	// Secret is gone are the operator's; the wait goes on until the operator's verdict.
	w.Memory = new(Memory)
	if done, recheck, err := TF.Finished(Observed{Object: obj, Pods: running}, w, t0.Add(4*time.Second)); done || err != nil || recheck != 6*time.Second {
		t.Errorf("running 4 s: done %v, recheck %s, err %v; want a look again in 6 s", done, recheck, err)
	}
	if done, _, err := TF.Finished(Observed{Object: obj, Pods: running}, w, t0.Add(10*time.Second)); done || err != nil || !w.Memory.Ran() {
		t.Errorf("running 10 s: done %v, err %v, ran %v; want a job that ran, not done", done, err, w.Memory.Ran())
	}
	later := t0.Add(72 * time.Hour)
	for _, pods := range [][]corev1.Pod{
		crashing(CrashLoopRestarts + 5),
		worker(waitingStatus("ImagePullBackOff", "registry.example/train:1: not found", 0), corev1.PodPending),
		worker(waitingStatus("CreateContainerConfigError", `secret "wandb" not found`, 0), corev1.PodPending),
	} {
		if done, _, err := TF.Finished(Observed{Object: obj, Pods: pods}, w, later); done || err != nil {
			t.Errorf("a job that ran, %s: done %v, err %v; want the wait to go on", pods[0].Status.ContainerStatuses[0].State.Waiting.Reason, done, err)
		}
	}
	failed := obj.DeepCopy()
	failed.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "True", "reason": "TFJobFailed",
		"message": "TFJob job has failed because it has reached the specified backoff limit"}}}
	if _, _, err := TF.Finished(Observed{Object: failed, Pods: crashing(CrashLoopRestarts + 6)}, w, later); err == nil ||
		!strings.Contains(err.Error(), "backoff limit") || !strings.Contains(err.Error(), "connection reset by peer") {
		t.Errorf("the operator's verdict does not fail the wait with its reason and the program's exit: %v", err)
	}
	succeeded := obj.DeepCopy()
	succeeded.Object["status"] = map[string]any{"conditions": []any{condition("Succeeded")}}
	if done, _, err := TF.Finished(Observed{Object: succeeded}, w, later); !done || err != nil {
		t.Errorf("a job its operator calls succeeded: done %v, err %v", done, err)
	}
}
