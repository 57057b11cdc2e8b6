package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// The real node's lane (make testacc-real-node): jobs whose pods run real containers on the
// local cluster's real node, judged by what the training programs print in their pods' logs.

// realNode returns the cluster's real node, or ends the test as clustertest.RealNodeFor says:
// skipped outside the real node's lane, failed under CI where the lane cannot run.
func realNode(t *testing.T) *realnode.Info {
	t.Helper()
	return clustertest.RealNodeFor(t)
}

// onRealNode is the HCL that puts a job's pods on the real node and nowhere else.
var onRealNode = fmt.Sprintf(`
  node_selector = { %[1]q = "true" }
  tolerations   = [%[2]q]
`, realnode.Label, realnode.Taint)

// etcdOnRealNode puts an elastic job's etcd, a CPU helper that does not follow the workers'
// placement, on the real node too.
var etcdOnRealNode = fmt.Sprintf(`
  roles = { etcd = { node_selector = { %[1]q = "true" }, tolerations = [%[2]q] } }
`, realnode.Label, realnode.Taint)

// sharedVolume makes a PersistentVolumeClaim in the default namespace bound to a folder of this
// machine (the real node's host): storage every pod of a job shares, as a checkpoint store. It
// returns the claim's name and the folder, which the test reads and writes directly.
func (a *api) sharedVolume(t *testing.T, name string) (claim, dir string) {
	t.Helper()
	dir = t.TempDir()
	if err := cluster.SharedVolume(context.Background(), clustertest.Kubeconfig(), "default", name, dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.DeleteSharedVolume(context.Background(), clustertest.Kubeconfig(), "default", name)
	})
	return name, dir
}

// event is one line a training program prints (cluster/images/training): what happened, at
// which world size and rank, at which step.
type event struct {
	Event       string  `json:"event"`
	Rank        int     `json:"rank"`
	WorldSize   int     `json:"world_size"`
	Step        int     `json:"step"`
	ResumedFrom int     `json:"resumed_from"`
	Loss        float64 `json:"loss"`
	// mpi_allreduce.py
	Sum, Expected int
	Hosts         []string
	// Runs is each MPI rank's TRAINING_RUN variable ("" where it has none).
	Runs []string
	// horovodrun (the stand-in): a host discovered or reached
	Host string
	// tf_config_check.py
	Task           string
	Index          int
	Tasks, Reached []string
	// identityProgram (realnode_podpatch_test.go)
	UID       int    `json:"uid"`
	GID       int    `json:"gid"`
	Groups    []int  `json:"groups"`
	Fetched   string `json:"fetched"`
	Heartbeat bool   `json:"heartbeat"`
	WriteOnly string `json:"write_only"`
}

// events reads a pod's log and returns the program's events in order (other lines, torchrun's
// own, are skipped). A pod that is not there yet has none.
func (a *api) events(pod string) ([]event, string) {
	data, err := a.kube.CoreV1().Pods("default").GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return nil, err.Error()
	}
	var events []event
	for _, line := range strings.Split(string(data), "\n") {
		start := strings.Index(line, `{"`)
		if start < 0 {
			continue
		}
		var e event
		if json.Unmarshal([]byte(line[start:]), &e) == nil && e.Event != "" {
			events = append(events, e)
		}
	}
	return events, string(data)
}

// podsEvents are the events of every pod that matches selector, pod after pod, and their logs.
func (a *api) podsEvents(selector string) ([]event, string) {
	var all []event
	var logs []string
	for _, p := range a.pods("default", selector) {
		events, log := a.events(p.Name)
		all = append(all, events...)
		logs = append(logs, "--- "+p.Name+"\n"+images.LastLines(log, 25))
	}
	return all, strings.Join(logs, "\n")
}

// waitEvents waits until the events of the pods that match selector satisfy ok, and fails the
// test with their logs and states if they never do.
func (a *api) waitEvents(t *testing.T, selector string, limit time.Duration, what string, ok func([]event) bool) []event {
	t.Helper()
	var events []event
	var logs string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, limit, true, func(context.Context) (bool, error) {
		events, logs = a.podsEvents(selector)
		return ok(events), nil
	})
	if err != nil {
		t.Fatalf("%s: the pods' logs never showed it within %s:\n%s\n%s", what, limit, logs, a.podStates())
	}
	return events
}

// podStates describes the default namespace's pods, with their containers' states, for a
// failure message.
func (a *api) podStates() string {
	list, err := a.kube.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, p := range list.Items {
		line := fmt.Sprintf("pod %s: %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				line += fmt.Sprintf(", Ready=%s since %s %s", c.Status, c.LastTransitionTime.Format(time.TimeOnly), c.Reason)
			}
		}
		for _, c := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			switch {
			case c.State.Waiting != nil:
				line += fmt.Sprintf("; %s waiting: %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
			case c.State.Terminated != nil:
				line += fmt.Sprintf("; %s terminated: %s exit %d %s", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode, c.State.Terminated.Message)
			}
		}
		lines = append(lines, line)
	}
	// A pod's name is in the cluster DNS only while the pod is Ready, and a node the
	// controller-manager finds silent has its pods marked not Ready: the nodes' and the Services'
	// endpoints say whether the pods could find each other.
	if nodes, err := a.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: realnode.Label + "=true"}); err == nil {
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					lines = append(lines, fmt.Sprintf("node %s: Ready=%s since %s %s", n.Name, c.Status, c.LastTransitionTime.Format(time.TimeOnly), c.Reason))
				}
			}
		}
	}
	if endpoints, err := a.kube.DiscoveryV1().EndpointSlices("default").List(context.Background(), metav1.ListOptions{}); err == nil {
		for _, s := range endpoints.Items {
			var eps []string
			for _, e := range s.Endpoints {
				eps = append(eps, fmt.Sprintf("%s ready=%v", ptr.Deref(e.Hostname, ptr.Deref(e.TargetRef, corev1.ObjectReference{}).Name), ptr.Deref(e.Conditions.Ready, false)))
			}
			lines = append(lines, fmt.Sprintf("endpoints of service %s: %s", s.Labels["kubernetes.io/service-name"], strings.Join(eps, ", ")))
		}
	}
	return strings.Join(lines, "\n")
}

// trainsAt is true when the program has started at that world size and stepped at it.
func trainsAt(size int) func([]event) bool {
	return func(events []event) bool {
		started, stepped := false, false
		for _, e := range events {
			started = started || e.Event == "start" && e.WorldSize == size
			stepped = stepped || e.Event == "step" && e.WorldSize == size
		}
		return started && stepped
	}
}

// atSize sums up the events at one world size: the fewest steps any rank resumed from, the
// first and last step, how many ranks started.
type atSize struct {
	starts, minResumed, firstStep, lastStep int
}

func summarize(events []event, size int) atSize {
	s := atSize{minResumed: -1, firstStep: -1}
	for _, e := range events {
		if e.WorldSize != size {
			continue
		}
		switch e.Event {
		case "start":
			s.starts++
			if s.minResumed < 0 || e.ResumedFrom < s.minResumed {
				s.minResumed = e.ResumedFrom
			}
		case "step":
			if s.firstStep < 0 || e.Step < s.firstStep {
				s.firstStep = e.Step
			}
			if e.Step > s.lastStep {
				s.lastStep = e.Step
			}
		}
	}
	return s
}

// The elastic job's default etcd image is the one the real node builds from the same release,
// so that the real node's tests run the default as it is.
func TestDefaultEtcdImageIsTheOneTheRealNodeBuilds(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	source, err := cluster.FindSourceDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	built, err := images.EtcdName(context.Background(), source)
	if err != nil {
		t.Fatal(err)
	}
	if built != jobs.DefaultEtcdImage {
		t.Errorf("the real node builds %s, the elastic job's default is %s: change cluster/components/etcd-image to the default's release", built, jobs.DefaultEtcdImage)
	}
}

// waitSucceeded waits until the operator's status of a job in the default namespace reads
// SUCCEEDED, and fails the test if it reads FAILED or never does.
func (a *api) waitSucceeded(t *testing.T, kind *jobs.Kind, name string) {
	const phase = jobs.Succeeded
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := a.get(kind.GVR, "default", name)
		if err != nil {
			return false, err
		}
		s, err := kind.Status(jobs.Observed{Object: obj}, time.Now())
		if err != nil {
			return false, err
		}
		last = s.Phase
		return s.Phase == jobs.Succeeded || s.Phase == jobs.Failed, nil
	})
	if err != nil || last != phase {
		t.Fatalf("%s %s: want %s, last read %q (%v)\n%s", kind.Object, name, phase, last, err, a.podStates())
	}
}

// completedAt checks that the training program ran to its end at world size size: every rank
// started at that size and rank 0 reached step steps.
func (a *api) completedAt(t *testing.T, selector string, size, steps int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		events := a.waitEvents(t, selector, 3*time.Minute, "the training to complete", func(events []event) bool {
			return slices.ContainsFunc(events, func(e event) bool { return e.Event == "done" })
		})
		if s := summarize(events, size); s.starts != size || s.lastStep != steps {
			return fmt.Errorf("want %d ranks to start at world size %d and rank 0 to reach step %d, got %+v", size, size, steps, s)
		}
		return nil
	}
}

// succeeded is a step that waits until the job's operator says it succeeded, then checks that a
// refresh reads SUCCEEDED.
func (a *api) succeeded(t *testing.T, kind *jobs.Kind, name, address string) resource.TestStep {
	return resource.TestStep{
		PreConfig:    func() { a.waitSucceeded(t, kind, name) },
		RefreshState: true,
		Check:        resource.TestCheckResourceAttr(address, "status", jobs.Succeeded),
	}
}
