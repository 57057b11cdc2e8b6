package jobs

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod scheduled at t0 whose one container's status is s.
func podWith(init bool, s corev1.ContainerStatus, t0 time.Time) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}}}
	if init {
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{s}
	} else {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{s}
	}
	return p
}

func withPullSecret(p corev1.Pod) corev1.Pod {
	p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-credentials"}}
	return p
}

func waitingStatus(reason, message string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "main", RestartCount: restarts, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

// What the kubelet says of a container is judged by whether it can pass by itself: at once for
// what cannot (an invalid name, a command that does not exist), after a grace counted from when
// the wait first saw it for what may be there soon (an image a registry says it lacks, a Secret
// not made yet), never for what may pass (a registry's 429 or 5xx, a host that does not answer, a
// Secret cache not synced yet, Services not read yet after a kubelet restart, a runtime hook that
// failed once); a crash loop, or a start that keeps failing, fails once the kubelet has restarted
// the container three times since the wait first saw it, saying how it exited and its last lines.
func TestPodFailureFailsOnlyOnWhatCannotPass(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	notFound := `Back-off pulling image "registry.example/train:nope": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/train:nope": ` +
		`failed to resolve reference "registry.example/train:nope": registry.example/train:nope: not found`
	denied := `failed to pull and unpack image "registry.example/private:1": failed to resolve reference "registry.example/private:1": pull access denied, ` +
		`repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`
	crashed := waitingStatus("CrashLoopBackOff", "back-off 20s restarting failed container=main pod=job-worker-0", 3)
	crashed.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error",
		StartedAt: metav1.NewTime(t0), FinishedAt: metav1.NewTime(t0.Add(400 * time.Millisecond)),
		Message: "Traceback (most recent call last):\n  File \"/train.py\", line 1\nModuleNotFoundError: No module named 'toch'\n"}
	for _, tc := range []struct {
		name  string
		pod   corev1.Pod
		after time.Duration // since the wait first saw the pod, at t0
		want  string        // "" for no failure
		next  time.Duration // when a graced trouble would fail
	}{
		{"pulling", podWith(false, waitingStatus("ContainerCreating", "", 0), t0), time.Minute, "", 0},
		{"an invalid image name", podWith(false, waitingStatus("InvalidImageName", `couldn't parse image name "Train:1"`, 0), t0), 0,
			`pod job-worker-0: container main: InvalidImageName: couldn't parse image name "Train:1"`, 0},
		{"an image that is not on the node, pulled never", podWith(false, waitingStatus("ErrImageNeverPull", "not present", 0), t0), 0,
			"ErrImageNeverPull: not present", 0},
		{"a tag the registry lacks, at first", podWith(false, waitingStatus("ImagePullBackOff", notFound, 0), t0), 10 * time.Second, "", 20 * time.Second},
		{"a tag the registry lacks, past the grace", podWith(false, waitingStatus("ImagePullBackOff", notFound, 0), t0), PullGrace,
			"ImagePullBackOff: " + notFound, 0},
		{"pulls refused, past the grace", podWith(true, waitingStatus("ErrImagePull", denied, 0), t0), time.Minute,
			"pod job-worker-0: init container main: ErrImagePull: " + denied, 0},
		{"pulls refused to a pod with a pull Secret, which may be made a moment later", withPullSecret(podWith(false, waitingStatus("ErrImagePull", denied, 0), t0)),
			time.Minute, "", time.Minute},
		{"pulls refused to a pod with a pull Secret, past its grace", withPullSecret(podWith(false, waitingStatus("ErrImagePull", denied, 0), t0)),
			MissingGrace, "ErrImagePull: " + denied, 0},
		{"a registry limiting pulls", podWith(false, waitingStatus("ImagePullBackOff", `Back-off pulling image "x": ErrImagePull: `+
			`failed to pull and unpack image "x": pulling from host registry.example failed with status code [manifests 1]: 429 Too Many Requests`, 0), t0), time.Hour, "", 0},
		{"a registry that does not answer", podWith(false, waitingStatus("ErrImagePull", `failed to do request: Head "https://registry.example/v2/train/manifests/1": `+
			`dial tcp 10.0.0.9:443: i/o timeout`, 0), t0), time.Hour, "", 0},
		{"a Secret not made yet", podWith(false, waitingStatus("CreateContainerConfigError", `secret "wandb" not found`, 0), t0), time.Minute, "", time.Minute},
		{"a Secret still missing past the grace", podWith(false, waitingStatus("CreateContainerConfigError", `secret "wandb" not found`, 0), t0), MissingGrace,
			`CreateContainerConfigError: secret "wandb" not found`, 0},
		{"a key still missing past the grace", podWith(false, waitingStatus("CreateContainerConfigError", "couldn't find key token in Secret default/wandb", 0), t0),
			MissingGrace + time.Second, "couldn't find key token", 0},
		{"a Secret cache not synced yet after a kubelet restart", podWith(false, waitingStatus("CreateContainerConfigError",
			"failed to sync secret cache: timed out waiting for the condition", 0), t0), time.Hour, "", 0},
		{"Services not read yet after a kubelet restart", podWith(false, waitingStatus("CreateContainerConfigError",
			"services have not yet been read at least once, cannot construct envvars", 0), t0), time.Hour, "", 0},
		{"a non-root pod on an image of root", podWith(false, waitingStatus("CreateContainerConfigError",
			"container has runAsNonRoot and image will run as root", 0), t0), 0, "runAsNonRoot", 0},
		{"a container name still reserved", podWith(false, waitingStatus("CreateContainerError", "failed to reserve container name", 0), t0), time.Hour, "", 0},
		{"a command that does not exist", podWith(false, waitingStatus("RunContainerError", `exec: "trian.py": executable file not found in $PATH`, 0), t0), 0,
			`RunContainerError: exec: "trian.py": executable file not found in $PATH`, 0},
		{"a command that does not exist, pulled never", podWith(false, corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "StartError", ExitCode: 128, Message: `exec: "trian.py": executable file not found in $PATH`}}}, t0), 0,
			`StartError: exec: "trian.py": executable file not found in $PATH`, 0},
		{"a device hook that failed once", podWith(false, waitingStatus("RunContainerError", `failed to create containerd task: failed to create shim task: `+
			`OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: exit status 1`, 1), t0),
			time.Minute, "", 0},
		{"a shim that timed out once", podWith(false, corev1.ContainerStatus{Name: "main", RestartCount: 1, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "StartError", ExitCode: 128, Message: "failed to start containerd task: context deadline exceeded"}}}, t0), time.Minute, "", 0},
		{"a start that keeps failing", podWith(false, waitingStatus("RunContainerError", "error running hook #0: exit status 1", 3), t0), time.Minute,
			"RunContainerError: error running hook #0: exit status 1", 0},
		{"one crash is a retry", podWith(false, waitingStatus("CrashLoopBackOff", "back-off 10s", 1), t0), time.Minute, "", 0},
		{"a crash loop", podWith(false, crashed, t0), time.Minute,
			"CrashLoopBackOff: exited with code 3 after 400ms, run 4 times; its last lines:\nTraceback (most recent call last):\n  File \"/train.py\", line 1\nModuleNotFoundError: No module named 'toch'", 0},
		{"a program that exited is the operator's to judge", podWith(false, corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Error", ExitCode: 1}}}, t0), time.Minute, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The wait first saw the pod at t0, its containers not yet restarted.
			m, first := new(Memory), *tc.pod.DeepCopy()
			for i := range first.Status.ContainerStatuses {
				first.Status.ContainerStatuses[i].RestartCount = 0
			}
			for i := range first.Status.InitContainerStatuses {
				first.Status.InitContainerStatuses[i].RestartCount = 0
			}
			m.PodFailure([]corev1.Pod{first}, t0)
			got, next := m.PodFailure([]corev1.Pod{tc.pod}, t0.Add(tc.after))
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("PodFailure = %q, want %q", got, tc.want)
			}
			if next != tc.next {
				t.Errorf("PodFailure's next look in %s, want %s", next, tc.next)
			}
		})
	}
	deleting := podWith(false, waitingStatus("InvalidImageName", "no", 0), t0)
	deleting.DeletionTimestamp = &metav1.Time{}
	if got, _ := new(Memory).PodFailure([]corev1.Pod{deleting}, t0); got != "" {
		t.Errorf("a pod being deleted is not the job's failure: %q", got)
	}
}

// A job runs once its expected pods are Running and their containers have run MinRunning since
// they last started; a crash loop never gets there and, past its third restart, fails the wait
// with the program's exit code and last lines; under fail_fast = "never" the wait goes on.
func TestRunningWaitsOutTheFirstSecondsOfEveryContainer(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	obj, err := NewTFJob(TFJobSpec{Name: "job", Namespace: "default", Workers: 1, Pod: PodOptions{Image: "i"}})
	if err != nil {
		t.Fatal(err)
	}
	obj.Object["status"] = map[string]any{"conditions": []any{condition("Running")}}
	running := func(started time.Time) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "tensorflow", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}
	}
	worker := func(s corev1.ContainerStatus) []corev1.Pod {
		p := podWith(false, s, t0)
		p.Labels = map[string]string{ReplicaTypeLabel: "worker"}
		p.Status.Phase = corev1.PodRunning
		return []corev1.Pod{p}
	}
	crashLoop := waitingStatus("CrashLoopBackOff", "back-off 20s", 3)
	crashLoop.Name = "tensorflow"
	crashLoop.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 3, Message: "bad flag --lr\n"}
	wait := RunningWait{Expect: map[string]int{"worker": 1}, FailFast: FailFastPermanent, MinRunning: 10 * time.Second}
	never := wait
	never.FailFast = FailFastNever
	for _, tc := range []struct {
		name    string
		pods    []corev1.Pod
		w       RunningWait
		done    bool
		recheck time.Duration
		failure string
	}{
		{"started 4 s ago", worker(running(t0.Add(-4 * time.Second))), wait, false, 6 * time.Second, ""},
		{"started 10 s ago", worker(running(t0.Add(-10 * time.Second))), wait, true, 0, ""},
		{"no window asked", worker(running(t0)), RunningWait{Expect: wait.Expect}, true, 0, ""},
		{"restarted 2 s ago", worker(running(t0.Add(-2 * time.Second))), wait, false, 8 * time.Second, ""},
		{"crash-looping", worker(crashLoop), wait, false, 0, "exited with code 3, run 4 times; its last lines:\nbad flag --lr"},
		{"crash-looping, fail_fast never", worker(crashLoop), never, false, 10 * time.Second, ""},
	} {
		// The wait saw the worker's container being created a minute before.
		creating := waitingStatus("ContainerCreating", "", 0)
		creating.Name = "tensorflow"
		tc.w.Memory = new(Memory)
		if _, _, err := TF.Running(Observed{Object: obj, Pods: worker(creating)}, tc.w, t0.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		done, recheck, err := TF.Running(Observed{Object: obj, Pods: tc.pods}, tc.w, t0)
		if done != tc.done || recheck != tc.recheck || (err != nil) != (tc.failure != "") || err != nil && !strings.Contains(err.Error(), tc.failure) {
			t.Errorf("%s: done %v, recheck %s, err %v; want %v, %s, %q", tc.name, done, recheck, err, tc.done, tc.recheck, tc.failure)
		}
	}
	failed := obj.DeepCopy()
	failed.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "True", "reason": "TFJobFailed", "message": "TFJob job is failed"}}}
	exited := worker(corev1.ContainerStatus{Name: "tensorflow", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2,
		StartedAt: metav1.NewTime(t0), FinishedAt: metav1.NewTime(t0.Add(1500 * time.Millisecond)), Message: "usage: train.py [-h]\ntrain.py: error: unrecognized arguments: --lr\n"}}})
	_, _, err = TF.Running(Observed{Object: failed, Pods: exited}, wait, t0)
	if err == nil || !strings.Contains(err.Error(), "TFJob job is failed\npod job-worker-0: container tensorflow exited with code 2 after 1.5s; its last lines:\n"+
		"usage: train.py [-h]\ntrain.py: error: unrecognized arguments: --lr") {
		t.Errorf("a failed job's error does not say how its program exited: %v", err)
	}
}
