package jobs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// What only a kubelet can tell: a container that will not run however long a wait lasts. The
// kubelet keeps retrying each of these, so the job's operator never calls the job failed; a wait
// that saw one would otherwise run out its whole timeout.

// failingWaits are the reasons a container waits for something that retrying does not bring: an
// image that cannot be pulled (after the kubelet's first retry: one failed pull may be passing),
// a Secret or key that does not exist, a container the runtime cannot create or start.
var failingWaits = map[string]bool{
	"ImagePullBackOff": true, "ErrImageNeverPull": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// crashLoopRestarts is how often a crash-looping container has restarted before its crash loop
// counts as a failure: past the kubelet's first backoffs, a crash that repeats is the program's.
const crashLoopRestarts = 3

// PodFailure says why a pod of the job cannot run, as its kubelet reports it (the pod, the
// container and the kubelet's reason and message), or "". A program that ran and exited is
// not judged here: its exit is the operator's to judge (retries, success policies).
func PodFailure(pods []corev1.Pod) string {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, group := range []struct {
			what     string
			statuses []corev1.ContainerStatus
		}{{"init container", p.Status.InitContainerStatuses}, {"container", p.Status.ContainerStatuses}} {
			for _, c := range group.statuses {
				if reason, message := containerFailure(c); reason != "" {
					return fmt.Sprintf("pod %s: %s %s: %s: %s", p.Name, group.what, c.Name, reason, message)
				}
			}
		}
	}
	return ""
}

func containerFailure(c corev1.ContainerStatus) (reason, message string) {
	if w := c.State.Waiting; w != nil {
		if failingWaits[w.Reason] || w.Reason == "CrashLoopBackOff" && c.RestartCount >= crashLoopRestarts {
			return w.Reason, w.Message
		}
	}
	// The runtime could not start the command (it does not exist, or is not executable): with
	// restartPolicy Never nothing retries it.
	if t := c.State.Terminated; t != nil && (t.Reason == "StartError" || t.Reason == "ContainerCannotRun") {
		return t.Reason, t.Message
	}
	return "", ""
}
