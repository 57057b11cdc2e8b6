// Package clustertest gives a test binary one local cluster: started before its tests and stopped
// after them, or, when TRAINING_TEST_KUBECONFIG names a kubeconfig, that cluster instead (kind,
// a real cluster, or one started by `make cluster`), which is then neither started nor stopped.
package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
)

// KubeconfigEnv names an existing cluster's kubeconfig to test against.
const KubeconfigEnv = "TRAINING_TEST_KUBECONFIG"

var (
	kubeconfig string
	realNode   *realnode.Info
	// noRealNode says why the real node's lane, when asked for, has no real node; empty
	// outside that lane, where its tests skip.
	noRealNode string
)

// WorkerSecret is the Secret of the tests' cluster's Kueue namespace that holds the worker
// cluster's kubeconfig (see Worker).
const WorkerSecret = "tf-acc-worker"

// Worker is a second local cluster, started on the first call and stopped when Run ends: a
// MultiKueue worker of the tests' cluster, whose Kueue finds its kubeconfig in WorkerSecret. It
// returns the worker's own kubeconfig, to read it and declare its queues with. Only a cluster
// the test binary started itself gets a worker (its Kueue must reach the worker on 127.0.0.1).
func Worker() (string, error) {
	return extraCluster("worker", nil, func(ctx context.Context, worker *cluster.Cluster) error {
		return cluster.RegisterWorker(ctx, kubeconfig, WorkerSecret, worker)
	})
}

// OtherKueue is the settings of the cluster KueueOtherwise starts: the integrations of Kueue's
// default configuration since v0.19 (the Kubeflow training-operator's left out: no PyTorchJob,
// no TFJob), a resource prefix left out of quota, and fair sharing.
var OtherKueue = cluster.KueueSettings{
	Frameworks:              []string{"kubeflow.org/mpijob", "trainer.kubeflow.org/trainjob"},
	ExcludeResourcePrefixes: []string{"example.com/"},
	FairSharing:             true,
}

// KueueOtherwise is a local cluster of its own whose Kueue is configured as OtherKueue says,
// started on the first call and stopped when Run ends; it returns its kubeconfig.
func KueueOtherwise() (string, error) {
	return extraCluster("kueue-otherwise", func(o *cluster.Options) { o.Kueue = &OtherKueue }, nil)
}

// extras are the clusters a test binary starts besides its own, by name.
var extras struct {
	mu sync.Mutex
	by map[string]*extra
}

type extra struct {
	once sync.Once
	c    *cluster.Cluster
	err  error
}

// extraCluster starts, on its first call, a local cluster besides the tests' own, with the default
// node layout and the options configure sets, then runs ready on it; Run stops it at the end. It
// returns the cluster's kubeconfig. Only a test binary that started its own cluster starts others
// (the clusters reach one another on 127.0.0.1).
func extraCluster(name string, configure func(*cluster.Options), ready func(context.Context, *cluster.Cluster) error) (string, error) {
	extras.mu.Lock()
	if extras.by == nil {
		extras.by = map[string]*extra{}
	}
	e := extras.by[name]
	if e == nil {
		e = &extra{}
		extras.by[name] = e
	}
	extras.mu.Unlock()
	e.once.Do(func() {
		if os.Getenv(KubeconfigEnv) != "" {
			e.err = fmt.Errorf("the tests run against %s=%s, beside which no cluster is started here", KubeconfigEnv, os.Getenv(KubeconfigEnv))
			return
		}
		wd, err := os.Getwd()
		if err != nil {
			e.err = err
			return
		}
		opts, err := DefaultOptions(wd)
		if err != nil {
			e.err = err
			return
		}
		opts.NodesFile = "" // the default layout: the tests know its nodes
		if configure != nil {
			configure(&opts)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		started := time.Now()
		if e.c, _, e.err = cluster.Start(ctx, opts); e.err != nil {
			return
		}
		if ready != nil {
			e.err = ready(ctx, e.c)
		}
		if e.err == nil {
			fmt.Fprintf(os.Stderr, "clustertest: %s cluster ready in %s\n", name, time.Since(started).Round(100*time.Millisecond))
		}
	})
	if e.err != nil {
		return "", fmt.Errorf("starting the %s cluster: %w", name, e.err)
	}
	return e.c.Kubeconfig, nil
}

// stopExtras stops the clusters extraCluster started.
func stopExtras() error {
	extras.mu.Lock()
	defer extras.mu.Unlock()
	var errs []error
	for name, e := range extras.by {
		if e.c == nil {
			continue
		}
		if err := e.c.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the %s cluster: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Kubeconfig is the path of the kubeconfig of the cluster the tests run against; it is set by Run.
func Kubeconfig() string { return kubeconfig }

// RealNode is the cluster's real node, or nil and why it has none: a test that needs real
// containers skips with that reason.
func RealNode() (*realnode.Info, string) { return realNode, noRealNode }

// RealNodeFor returns the cluster's real node, or ends the test: it is skipped when the run did
// not ask for the real node (RealNodeEnv, the real node's lane asks), and when the run asked but
// this machine cannot run one, with the reason; under CI (CI set) that last case fails instead,
// since the lane is there to prove what runs, and a lane that skips proves nothing.
func RealNodeFor(t testing.TB) *realnode.Info {
	t.Helper()
	if realNode != nil {
		return realNode
	}
	if noRealNode == "" {
		t.Skip("no real node: the real node's lane runs this test (" + realnode.Env + "=1, make testacc-real-node)")
	}
	withoutRealNode(t, noRealNode)
	return nil
}

// RequireRealNode ends a test that starts a real node of its own on a machine that cannot run
// one: skipped, saying why, or under CI failed.
func RequireRealNode(t testing.TB) {
	t.Helper()
	if reason := realnode.Unavailable(); reason != "" {
		withoutRealNode(t, reason)
	}
}

func withoutRealNode(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal("the real node's tests run under CI, and this machine cannot run the real node: " + reason)
	}
	t.Skip("no real node: " + reason)
}

// Run provides the cluster, runs the tests and returns their exit code: use it as
// `os.Exit(clustertest.Run(m))` in TestMain. Each setup runs first, with the cluster's admin
// kubeconfig; if one fails, no test runs.
func Run(m *testing.M, setup ...func(kubeconfig string) error) int {
	runTests := func() int {
		for _, s := range setup {
			if err := s(kubeconfig); err != nil {
				fmt.Fprintln(os.Stderr, "clustertest: setting up the cluster for the tests:", err)
				return 1
			}
		}
		// A node that goes unhealthy fails the run by name and time, rather than some test
		// that happened to schedule a pod or read a taint then.
		watch, err := cluster.WatchNodes(context.Background(), kubeconfig, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "clustertest: watching the nodes:", err)
			return 1
		}
		code := m.Run()
		if err := stopExtras(); err != nil {
			fmt.Fprintln(os.Stderr, "clustertest:", err)
			code = 1
		}
		if problems := watch.Stop(); len(problems) > 0 {
			fmt.Fprintf(os.Stderr, "clustertest: FAIL: %d time(s) a node stopped being healthy during the tests:\n  %s\n",
				len(problems), strings.Join(problems, "\n  "))
			code = 1
		}
		return code
	}
	if path := os.Getenv(KubeconfigEnv); path != "" {
		kubeconfig = path
		return runTests()
	}
	c, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clustertest: starting the local cluster:", err)
		return 1
	}
	kubeconfig = c.Kubeconfig
	realNode = c.Node
	code := runTests()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "clustertest: stopping the local cluster:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func start() (*cluster.Cluster, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	opts, err := DefaultOptions(wd)
	if err != nil {
		return nil, err
	}
	if os.Getenv(realnode.Env) == "1" {
		if reason := realnode.Unavailable(); reason != "" {
			noRealNode = reason
		} else {
			opts.RealNode = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // a cold build included
	defer cancel()
	c, _, err := cluster.Start(ctx, opts)
	return c, err
}

// DefaultOptions are the options of a test binary's own cluster: binaries from the shared cache
// (TRAINING_CLUSTER_CACHE, else the repository's .cluster/bin), everything else in a new
// temporary folder, processes that die with the test binary, and the generation
// TRAINING_CLUSTER_GENERATION names.
func DefaultOptions(wd string) (cluster.Options, error) {
	source, err := cluster.FindSourceDir(wd)
	if err != nil {
		return cluster.Options{}, err
	}
	cache := os.Getenv("TRAINING_CLUSTER_CACHE")
	if cache == "" {
		cache = filepath.Join(filepath.Dir(source), ".cluster", "bin")
	}
	runDir, err := os.MkdirTemp("", "training-cluster-")
	if err != nil {
		return cluster.Options{}, err
	}
	return cluster.Options{
		SourceDir:     source,
		CacheDir:      cache,
		RunDir:        runDir,
		NodesFile:     os.Getenv("TRAINING_CLUSTER_NODES"),
		Generation:    os.Getenv(cluster.GenerationEnv),
		Log:           os.Stderr,
		DieWithParent: true,
	}, nil
}
