package jobs

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What only a kubelet can tell: a container that will not run however long a wait lasts, and one
// whose trouble may pass. The kubelet retries all of them, so the job's operator never calls the
// job failed; a wait that ended on the first of them would turn a registry's 429 or a Secret made
// a moment later into a failed, tainted job, and one that ended on none would run out its timeout
// on a job that cannot start.

// FailFast is which of its pods' troubles end a wait at once (the fail_fast attribute).
type FailFast string

const (
	// FailFastPermanent: a trouble that cannot pass by itself ends the wait, at once or when its
	// grace runs out; one that may pass is waited on.
	FailFastPermanent FailFast = "permanent"
	// FailFastNever: only the job's own failure ends the wait; its pods' troubles are waited on.
	FailFastNever FailFast = "never"
)

// FailFastPolicies are the values of fail_fast.
var FailFastPolicies = []string{string(FailFastPermanent), string(FailFastNever)}

const (
	// PullGrace is how long an image that cannot be found, or may not be pulled, may go on failing
	// after its pod was scheduled before that is taken as permanent: a registry can say not found
	// for a tag pushed a moment ago, and the kubelet pulls again 10 and 30 seconds later.
	PullGrace = 30 * time.Second
	// MissingGrace is how long a Secret, ConfigMap or key that a container's environment names may
	// be missing: another resource of the same apply, or a controller, may be about to make it.
	MissingGrace = 2 * time.Minute
	// CrashLoopRestarts is how often a container that keeps exiting has been restarted when its
	// crash loop counts as the program's failure: with the kubelet's back-off (at once, 10 s,
	// 20 s) that is about half a minute, past the retries a launcher needs while its workers
	// start.
	CrashLoopRestarts = 3
)

// Trouble is what a pod's container reports that keeps it from running.
type Trouble struct {
	Pod, Container  string
	Init            bool
	Reason, Message string
	// Permanent: it cannot pass by itself, from Final on (zero: at once).
	Permanent bool
	Final     time.Time
}

func (t Trouble) String() string {
	what := "container"
	if t.Init {
		what = "init container"
	}
	return fmt.Sprintf("pod %s: %s %s: %s: %s", t.Pod, what, t.Container, t.Reason, t.Message)
}

// Failed says whether the trouble has become permanent at now.
func (t Trouble) Failed(now time.Time) bool { return t.Permanent && !now.Before(t.Final) }

// PodTroubles lists what keeps the pods' containers from running, as their kubelets report it,
// but for pods being deleted. A program that ran and exited is not a trouble unless it keeps
// exiting (a crash loop): its exit is the operator's to judge (retries, success policies).
func PodTroubles(pods []corev1.Pod) []Trouble {
	var out []Trouble
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		scheduled := scheduledAt(p)
		for _, group := range []struct {
			init     bool
			statuses []corev1.ContainerStatus
		}{{true, p.Status.InitContainerStatuses}, {false, p.Status.ContainerStatuses}} {
			for _, c := range group.statuses {
				if t, ok := trouble(c, scheduled); ok {
					t.Pod, t.Container, t.Init = p.Name, c.Name, group.init
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// PodFailure is the first of the pods' troubles that has become permanent at now, as its
// String says it, or "". next is how long until a trouble that may become permanent does (zero
// if none will): no event marks that moment.
func PodFailure(pods []corev1.Pod, now time.Time) (failure string, next time.Duration) {
	for _, t := range PodTroubles(pods) {
		switch {
		case t.Failed(now):
			return t.String(), 0
		case t.Permanent && (next == 0 || t.Final.Sub(now) < next):
			next = t.Final.Sub(now)
		}
	}
	return "", next
}

// trouble judges one container's status; scheduled is when its pod was given a node.
func trouble(c corev1.ContainerStatus, scheduled time.Time) (Trouble, bool) {
	if t := c.State.Terminated; t != nil && (t.Reason == "StartError" || t.Reason == "ContainerCannotRun") {
		// The runtime could not start the command (it does not exist, or is not executable).
		return Trouble{Reason: t.Reason, Message: t.Message, Permanent: true}, true
	}
	w := c.State.Waiting
	if w == nil {
		return Trouble{}, false
	}
	t := Trouble{Reason: w.Reason, Message: w.Message}
	switch w.Reason {
	case "InvalidImageName", "ErrImageNeverPull", "RunContainerError":
		t.Permanent = true
	case "ErrImagePull", "ImagePullBackOff":
		t.Permanent, t.Final = pullRefused(w.Message), scheduled.Add(PullGrace)
	case "CreateContainerConfigError":
		// A Secret, ConfigMap or key that is not there yet may be; anything else (runAsNonRoot
		// against the image's user) is the configuration's.
		t.Permanent = true
		if strings.Contains(w.Message, " not found") || strings.Contains(w.Message, "couldn't find key") {
			t.Final = scheduled.Add(MissingGrace)
		}
	case "CrashLoopBackOff":
		t.Permanent = c.RestartCount >= CrashLoopRestarts
		if last := c.LastTerminationState.Terminated; last != nil {
			t.Message = exited(*last, c.RestartCount+1)
		}
	case "ContainerCreating", "PodInitializing", "":
		return Trouble{}, false
	}
	// Anything else (CreateContainerError: a name still reserved, a runtime's deadline) may pass.
	return t, true
}

// pullRefused says whether a failed pull's message is the registry's refusal of the image (it
// does not exist, or may not be pulled with these credentials), not a failure to reach it (a
// timeout, a 429, a 5xx), which may pass. containerd 1.6 says "not found" for a tag or repository
// that does not exist and "pull access denied" or 401/403 when the credentials do not allow it.
func pullRefused(message string) bool {
	m := strings.ToLower(message)
	for _, s := range []string{"code = notfound", ": not found", "manifest unknown", "name unknown", "pull access denied",
		"insufficient_scope", "401 unauthorized", "403 forbidden", "failed to authorize", "repository does not exist"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// scheduledAt is when the pod was given a node, or when it was made if it has not been.
func scheduledAt(p corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return p.CreationTimestamp.Time
}

// exited says how a container's run ended: its exit code, how long it ran and the last lines it
// wrote (the kubelet's termination message, which holds the log's last lines for the containers
// this provider makes: TerminationMessageFallbackToLogsOnError).
func exited(t corev1.ContainerStateTerminated, runs int32) string {
	s := fmt.Sprintf("exited with code %d", t.ExitCode)
	if t.Reason != "" && t.Reason != "Error" {
		s += " (" + t.Reason + ")"
	}
	if !t.StartedAt.IsZero() && !t.FinishedAt.IsZero() {
		s += fmt.Sprintf(" after %s", t.FinishedAt.Sub(t.StartedAt.Time).Round(100*time.Millisecond))
	}
	if runs > 1 {
		s += fmt.Sprintf(", run %d times", runs)
	}
	if tail := lastLines(t.Message, 10); tail != "" {
		s += "; its last lines:\n" + tail
	}
	return s
}

// lastLines is the last n lines of s, without trailing blank ones.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// ProgramExits says how the programs of the pods that exited with an error ended (each
// container's exit code and last lines), for a job its operator failed; "" if none did.
func ProgramExits(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			t := c.State.Terminated
			if t == nil || t.ExitCode == 0 {
				t = c.LastTerminationState.Terminated
			}
			if t != nil && t.ExitCode != 0 {
				out = append(out, fmt.Sprintf("pod %s: container %s %s", p.Name, c.Name, exited(*t, c.RestartCount+1)))
			}
		}
	}
	return strings.Join(out, "\n")
}
