package jobs

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodFailureNamesThePodTheContainerAndTheKubeletsReason(t *testing.T) {
	pod := func(init bool, s corev1.ContainerStatus) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0"}}
		if init {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{s}
		} else {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{s}
		}
		return p
	}
	waiting := func(reason, message string, restarts int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "main", RestartCount: restarts, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
	}
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want string // "" for no failure
	}{
		{"pulling", pod(false, waiting("ContainerCreating", "", 0)), ""},
		{"a first failed pull may be passing", pod(false, waiting("ErrImagePull", "rpc error", 0)), ""},
		{"the kubelet backs off pulling", pod(false, waiting("ImagePullBackOff", `Back-off pulling image "x"`, 0)),
			`pod job-worker-0: container main: ImagePullBackOff: Back-off pulling image "x"`},
		{"an init container's image", pod(true, waiting("ImagePullBackOff", "no", 0)), "pod job-worker-0: init container main: ImagePullBackOff: no"},
		{"a missing Secret", pod(false, waiting("CreateContainerConfigError", `secret "wandb" not found`, 0)),
			`pod job-worker-0: container main: CreateContainerConfigError: secret "wandb" not found`},
		{"one crash is not a loop", pod(false, waiting("CrashLoopBackOff", "back-off 10s", 1)), ""},
		{"a crash loop", pod(false, waiting("CrashLoopBackOff", "back-off 40s", 3)), "pod job-worker-0: container main: CrashLoopBackOff: back-off 40s"},
		{"a command that does not exist", pod(false, corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "StartError", ExitCode: 128, Message: `exec: "trian.py": executable file not found in $PATH`}}}),
			`pod job-worker-0: container main: StartError: exec: "trian.py": executable file not found in $PATH`},
		{"a program that failed is the operator's to judge", pod(false, corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Error", ExitCode: 1}}}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PodFailure([]corev1.Pod{tc.pod})
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("PodFailure = %q, want %q", got, tc.want)
			}
		})
	}
	deleting := pod(false, waiting("ImagePullBackOff", "no", 0))
	deleting.DeletionTimestamp = &metav1.Time{}
	if got := PodFailure([]corev1.Pod{deleting}); got != "" {
		t.Errorf("a pod being deleted is not the job's failure: %q", got)
	}
}
