package cluster

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// nodeLifecycleTaintPrefix is the prefix of the taints Kubernetes itself puts on nodes that are
// unreachable, not ready, under pressure or cordoned.
const nodeLifecycleTaintPrefix = "node.kubernetes.io/"

// NodeProblems says what is wrong with a node as a kubelet-backed node would never show it on a
// healthy cluster: its Ready condition is not True, or Kubernetes tainted it (unreachable,
// not-ready, pressure, cordoned). It returns nil for a healthy node.
func NodeProblems(n *corev1.Node) []string {
	var problems []string
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
			if !ready {
				problems = append(problems, fmt.Sprintf("Ready=%s (%s: %s)", c.Status, c.Reason, c.Message))
			}
		}
	}
	if !ready && len(problems) == 0 {
		problems = append(problems, "no Ready condition")
	}
	for _, t := range n.Spec.Taints {
		if strings.HasPrefix(t.Key, nodeLifecycleTaintPrefix) {
			problems = append(problems, "taint "+t.ToString())
		}
	}
	return problems
}

// NodeWatch watches a cluster's nodes and records every time one that was healthy stops being so
// (see NodeProblems), naming the node and the time: on the local cluster that is always a fault of
// the cluster, never of a test, and it makes unrelated tests fail by chance.
type NodeWatch struct {
	out    io.Writer
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	healthy  map[string]bool
	problems []string
}

// WatchNodes starts watching the nodes of the cluster kubeconfig names; each problem is also
// written to out as it is seen. Nodes unhealthy when first seen (when the watch starts, or a node
// added since, such as the provisioner's, that has yet to become Ready) are written to out but not
// recorded: the watch is for nodes that go wrong while it runs.
func WatchNodes(ctx context.Context, kubeconfig string, out io.Writer) (*NodeWatch, error) {
	c, err := newClients(kubeconfig)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &NodeWatch{out: out, cancel: cancel, done: make(chan struct{}), healthy: map[string]bool{}}
	factory := informers.NewSharedInformerFactory(c.kube, 0)
	informer := factory.Core().V1().Nodes().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, true) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
	}); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(w.done)
		informer.Run(ctx.Done())
	}()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		w.Stop()
		return nil, fmt.Errorf("watching nodes: %w", ctx.Err())
	}
	return w, nil
}

func (w *NodeWatch) observe(obj any, first bool) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	problems := NodeProblems(n)
	w.mu.Lock()
	defer w.mu.Unlock()
	was, known := w.healthy[n.Name]
	w.healthy[n.Name] = len(problems) == 0
	if len(problems) == 0 {
		return
	}
	line := fmt.Sprintf("%s node %s: %s", time.Now().UTC().Format(time.RFC3339Nano), n.Name, strings.Join(problems, "; "))
	switch {
	case first || !known:
		_, _ = fmt.Fprintf(w.out, "nodewatch: unhealthy when first seen (a node that has yet to become Ready is not counted): %s\n", line)
	case was:
		w.problems = append(w.problems, line)
		_, _ = fmt.Fprintf(w.out, "nodewatch: NODE BECAME UNHEALTHY: %s\n", line)
	}
}

// Stop ends the watch and returns what went wrong while it ran, one line per node and time,
// sorted by time.
func (w *NodeWatch) Stop() []string {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	out := append([]string(nil), w.problems...)
	sort.Strings(out)
	return out
}
