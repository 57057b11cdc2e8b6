package jobs

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
	// PullGrace is how long an image that a registry says does not exist, or refuses to a pod that
	// names no pull Secret, may go on failing after a wait first saw it before that is taken as
	// permanent: a tag pushed a moment ago appears, and the kubelet pulls again 10 and 30 seconds
	// later.
	PullGrace = 30 * time.Second
	// MissingGrace is how long a Secret, ConfigMap or key that a container's environment names may
	// be missing, and how long a registry may refuse a pod that names pull Secrets, after a wait
	// first saw it: another resource of the same apply, or a controller, may be about to make
	// the Secret (the provider may not read Secrets, so it cannot tell a pull Secret that is
	// missing from one whose credentials are refused).
	MissingGrace = 2 * time.Minute
	// CrashLoopRestarts is how often a container that keeps exiting (or that its runtime keeps
	// failing to start) has been restarted since the wait first saw it, or since the job last ran,
	// when that counts as the program's failure: with the kubelet's back-off (at once, 10 s,
	// 20 s) that is about half a minute, past the retries a launcher needs while its workers
	// start, and past a runtime's or device hook's failure that happened once.
	CrashLoopRestarts = 3
)

// Trouble is what a pod's container reports that keeps it from running.
type Trouble struct {
	Pod, Container  string
	Init            bool
	Reason, Message string
	// Permanent: it cannot pass by itself once the wait has seen it for Grace (zero: at once).
	Permanent bool
	Grace     time.Duration
	// Since is when the wait first saw it.
	Since time.Time
}

func (t Trouble) String() string {
	what := "container"
	if t.Init {
		what = "init container"
	}
	return fmt.Sprintf("pod %s: %s %s: %s: %s", t.Pod, what, t.Container, t.Reason, t.Message)
}

// Failed says whether the trouble has become permanent at now.
func (t Trouble) Failed(now time.Time) bool { return t.Permanent && !now.Before(t.Since.Add(t.Grace)) }

// Memory is what a wait remembers of a job between its looks: when it first saw each of its
// pods' troubles (a grace counts from there, not from when the pod was scheduled, so a long
// image pull does not spend it), each container's restarts when it first saw it or when the
// job last ran (a crash loop counts restarts since then, not over the pod's life), and whether
// the job has run as the wait expects (from then on its pods' troubles are its operator's to
// retry). A wait keeps one for its whole life; the zero value has seen nothing.
type Memory struct {
	seen     map[sighting]time.Time
	restarts map[containerID]int32
	ran      bool
}

type containerID struct {
	pod       types.UID
	podName   string
	container string
	init      bool
}

type sighting struct {
	containerID
	reason string
}

// Ran says whether the wait has seen the job run as it expects.
func (m *Memory) Ran() bool { return m != nil && m.ran }

// markRan records that the job runs as the wait expects, with its containers' restarts now.
func (m *Memory) markRan(pods []corev1.Pod) {
	m.ran = true
	eachContainer(pods, func(id containerID, c corev1.ContainerStatus) { m.restarts[id] = c.RestartCount })
}

// look records what the wait sees at now: each container's restarts the first time it is seen.
func (m *Memory) look(pods []corev1.Pod) {
	if m.restarts == nil {
		m.seen, m.restarts = map[sighting]time.Time{}, map[containerID]int32{}
	}
	eachContainer(pods, func(id containerID, c corev1.ContainerStatus) {
		if _, ok := m.restarts[id]; !ok {
			m.restarts[id] = c.RestartCount
		}
	})
}

// since is when the wait first saw the trouble, now if it has not before.
func (m *Memory) since(id containerID, reason string, now time.Time) time.Time {
	k := sighting{id, reason}
	first, ok := m.seen[k]
	if !ok {
		m.seen[k], first = now, now
	}
	return first
}

func eachContainer(pods []corev1.Pod, f func(containerID, corev1.ContainerStatus)) {
	for _, p := range pods {
		for _, group := range []struct {
			init     bool
			statuses []corev1.ContainerStatus
		}{{true, p.Status.InitContainerStatuses}, {false, p.Status.ContainerStatuses}} {
			for _, c := range group.statuses {
				f(containerID{pod: p.UID, podName: p.Name, container: c.Name, init: group.init}, c)
			}
		}
	}
}

// PodTroubles lists what keeps the pods' containers from running, as their kubelets report it,
// but for pods being deleted, with when m first saw each (m records what it sees: it is the
// wait's memory). A program that ran and exited is not a trouble unless it keeps exiting (a
// crash loop since m first saw it): its exit is the operator's to judge (retries, success
// policies).
func (m *Memory) PodTroubles(pods []corev1.Pod, now time.Time) []Trouble {
	m.look(pods)
	var out []Trouble
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		pullSecrets := len(p.Spec.ImagePullSecrets) > 0
		eachContainer([]corev1.Pod{p}, func(id containerID, c corev1.ContainerStatus) {
			t, ok := trouble(c, c.RestartCount-m.restarts[id], pullSecrets)
			if !ok {
				return
			}
			t.Pod, t.Container, t.Init = p.Name, c.Name, id.init
			t.Since = m.since(id, t.Reason, now)
			out = append(out, t)
		})
	}
	return out
}

// PodFailure is the first of the pods' troubles that has become permanent at now, as its
// String says it, or "". next is how long until a trouble that may become permanent does (zero
// if none will): no event marks that moment.
func (m *Memory) PodFailure(pods []corev1.Pod, now time.Time) (failure string, next time.Duration) {
	for _, t := range m.PodTroubles(pods, now) {
		final := t.Since.Add(t.Grace)
		switch {
		case t.Failed(now):
			return t.String(), 0
		case t.Permanent && (next == 0 || final.Sub(now) < next):
			next = final.Sub(now)
		}
	}
	return "", next
}

// trouble judges one container's status; restarts is how often it was restarted since the wait
// first saw it or the job last ran, pullSecrets whether its pod names image pull Secrets.
func trouble(c corev1.ContainerStatus, restarts int32, pullSecrets bool) (Trouble, bool) {
	if t := c.State.Terminated; t != nil && (t.Reason == "StartError" || t.Reason == "ContainerCannotRun") {
		return Trouble{Reason: t.Reason, Message: t.Message, Permanent: cannotStart(t.Message, restarts)}, true
	}
	w := c.State.Waiting
	if w == nil {
		return Trouble{}, false
	}
	t := Trouble{Reason: w.Reason, Message: w.Message}
	switch w.Reason {
	case "InvalidImageName", "ErrImageNeverPull":
		t.Permanent = true
	case "RunContainerError":
		t.Permanent = cannotStart(w.Message, restarts)
	case "ErrImagePull", "ImagePullBackOff":
		t.Permanent, t.Grace = pullRefused(w.Message), PullGrace
		if pullSecrets && authRefused(w.Message) {
			t.Grace = MissingGrace
		}
	case "CreateContainerConfigError":
		t.Permanent, t.Grace = configRefused(w.Message)
	case "CrashLoopBackOff":
		t.Permanent = restarts >= CrashLoopRestarts
		if last := c.LastTerminationState.Terminated; last != nil {
			t.Message = exited(*last, c.RestartCount+1)
		}
	case "ContainerCreating", "PodInitializing", "":
		return Trouble{}, false
	}
	// Anything else (CreateContainerError: a name still reserved, a runtime's deadline) may pass.
	return t, true
}

// cannotStart says whether a container the runtime failed to start cannot start however often it
// tries: its command does not exist or cannot be run (runc's "exec: ..."), or it has failed to
// start CrashLoopRestarts times since the wait first saw it. Anything else (a device or runtime
// hook that failed, a shim that timed out) may pass on the next try.
func cannotStart(message string, restarts int32) bool {
	return strings.Contains(message, `exec: "`) || restarts >= CrashLoopRestarts
}

// configRefused judges a container the kubelet could not configure: a Secret, ConfigMap or key
// its environment names that is missing is permanent after MissingGrace; a security context the
// image cannot meet, at once; anything else (a Secret cache not synced yet, Services not read yet
// after a kubelet restart, a subPath not prepared yet) may pass.
func configRefused(message string) (permanent bool, grace time.Duration) {
	switch {
	case strings.Contains(message, " not found") || strings.Contains(message, "couldn't find key"):
		return true, MissingGrace
	case strings.Contains(message, "runAsNonRoot") || strings.Contains(message, "non-root policy"):
		return true, 0
	}
	return false, 0
}

// pullRefused says whether a failed pull's message is the registry's refusal of the image (it
// does not exist, or may not be pulled with these credentials), not a failure to reach it (a
// timeout, a 429, a 5xx), which may pass. containerd 1.6 says "not found" for a tag or repository
// that does not exist and "pull access denied" or 401/403 when the credentials do not allow it.
func pullRefused(message string) bool {
	m := strings.ToLower(message)
	for _, s := range []string{"code = notfound", ": not found", "manifest unknown", "name unknown"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return authRefused(message)
}

// authRefused says whether a failed pull's message is the registry's refusal of the credentials.
func authRefused(message string) bool {
	m := strings.ToLower(message)
	for _, s := range []string{"pull access denied", "insufficient_scope", "401 unauthorized", "403 forbidden", "failed to authorize",
		"repository does not exist"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
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
