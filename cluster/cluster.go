// Package cluster builds and runs a local Kubernetes control plane for the provider's tests and
// demo: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK's simulated nodes,
// mpi-operator, training-operator, frameworkcontroller and Kueue, all on 127.0.0.1.
//
// Each part is built from the Go module proxy by a module of its own under components/, so that
// each keeps the dependency versions it was written against and the provider never links
// k8s.io/kubernetes.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
)

// Options says where a cluster's files live and how it runs.
type Options struct {
	// SourceDir is this module's folder (holding components/, nodes.yaml); see FindSourceDir.
	SourceDir string
	// CacheDir holds the built binaries, keyed by version.
	CacheDir string
	// RunDir holds one running cluster's state: PIDs, logs, certificates, etcd data, kubeconfig.
	RunDir string
	// NodesFile replaces the default node layout (nodes.yaml) when set.
	NodesFile string
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// SkipOperators starts no operator (benchmarks that measure objects only): the job CRDs
	// are installed, but no pod is ever created for a job.
	SkipOperators bool
	// DieWithParent makes every process die with the one that started it (test binaries), so
	// a killed test run leaves no cluster behind.
	DieWithParent bool
	// MPIOperatorArgs are added to mpi-operator's command line (its flags:
	// components/mpi-operator/main.go).
	MPIOperatorArgs []string
	// ControllerManagerArgs are added to kube-controller-manager's command line.
	ControllerManagerArgs []string
	// Generation names the set of versions every part is built at (Current when empty; see
	// Generations).
	Generation string
	// RealNode adds the real node (package realnode), on which containers really run; see
	// realnode.Unavailable for what the machine needs.
	RealNode bool
	// Kueue configures Kueue otherwise than the default (nil): see KueueSettings.
	Kueue *KueueSettings
}

// Cluster is a running local cluster.
type Cluster struct {
	RunDir     string            `json:"runDir"`
	Kubeconfig string            `json:"kubeconfig"`
	Processes  map[string]int    `json:"processes"` // component name -> PID
	Ports      map[string]int    `json:"ports"`
	Binaries   map[string]string `json:"binaries"` // component name -> executable
	// Generation is the set of versions its parts run (Options.Generation).
	Generation string `json:"generation"`
	// Node is the real node, when the cluster has one (Options.RealNode).
	Node *realnode.Info `json:"node,omitempty"`
}

const stateFile = "cluster.json"

// the order in which Stop ends processes: dependants first, etcd last.
var stopOrder = []string{
	"provisioner", "trainer", "jobset", "kueue", "frameworkcontroller", "training-operator", "mpi-operator", "kwok",
	"kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd",
}

// FindSourceDir walks up from dir to the folder holding this module's components/ (the
// repository's cluster/ folder), so the tool and test binaries work from any package folder.
func FindSourceDir(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		for _, candidate := range []string{d, filepath.Join(d, "cluster")} {
			if st, err := os.Stat(filepath.Join(candidate, "components", "kubernetes", "go.mod")); err == nil && !st.IsDir() {
				return candidate, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no cluster/components folder above %s", dir)
		}
	}
}

// generation is the cluster's generation; a state file written before generations were recorded
// is of the current one.
func (c *Cluster) generation() string {
	if c.Generation == "" {
		return Current
	}
	return c.Generation
}

// Running returns the cluster recorded in runDir if all its processes are alive and its API
// server answers, or nil.
func Running(ctx context.Context, runDir string) (*Cluster, error) {
	data, err := os.ReadFile(filepath.Join(runDir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Cluster
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(runDir, stateFile), err)
	}
	for name, pid := range c.Processes {
		if !c.alive(name, pid) {
			return nil, nil
		}
	}
	client, err := newClients(c.Kubeconfig)
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := client.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return nil, nil
	}
	return &c, nil
}

// Start builds what is missing and starts a cluster in opts.RunDir, or returns the one already
// running there (reused reports which). If any part fails to start, the parts already started
// are stopped and the error carries the last lines of the failing part's log.
func Start(ctx context.Context, opts Options) (*Cluster, bool, error) {
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	gen, err := CheckGeneration(opts.Generation)
	if err != nil {
		return nil, false, err
	}
	if running, err := Running(ctx, opts.RunDir); err != nil || running != nil {
		if err == nil && running.generation() != gen {
			return nil, false, fmt.Errorf("the cluster running in %s is of generation %s, not %s: stop it first (make cluster-down)", opts.RunDir, running.generation(), gen)
		}
		return running, running != nil, err
	}
	// A stale state file (processes gone) is cleaned up before starting anew.
	if err := stopRecorded(opts.RunDir); err != nil {
		return nil, false, err
	}

	bins, err := Binaries(ctx, opts.SourceDir, gen, opts.CacheDir, logw)
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Join(opts.RunDir, "logs"), 0o755); err != nil {
		return nil, false, err
	}
	c := &Cluster{
		RunDir:     opts.RunDir,
		Kubeconfig: filepath.Join(opts.RunDir, "kubeconfig"),
		Processes:  map[string]int{},
		Ports:      map[string]int{},
		Binaries:   bins,
		Generation: gen,
	}
	if err := c.start(ctx, opts, logw); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, false, err
	}
	return c, false, nil
}

func (c *Cluster) start(ctx context.Context, opts Options, logw io.Writer) error {
	started := time.Now()
	s := &starter{c: c, opts: opts, log: logw, pki: pki{dir: filepath.Join(opts.RunDir, "pki")}}
	if err := s.pki.generate(); err != nil {
		return fmt.Errorf("generating certificates: %w", err)
	}
	for _, name := range []string{"etcd", "etcd-peer", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "training-operator-webhook", "kueue-webhook", "jobset-webhook", "trainer-webhook"} {
		port, err := host.FreePort()
		if err != nil {
			return err
		}
		c.Ports[name] = port
	}
	if err := writeKubeconfig(c.Kubeconfig, c.Ports["kube-apiserver"], s.pki); err != nil {
		return err
	}

	if err := s.startEtcd(ctx); err != nil {
		return err
	}
	if err := s.startAPIServer(ctx); err != nil {
		return err
	}
	client, err := newClients(c.Kubeconfig)
	if err != nil {
		return err
	}
	if err := s.installCRDs(ctx, client); err != nil {
		return err
	}
	if err := s.createNodes(ctx, client); err != nil {
		return err
	}
	if err := s.startControllers(); err != nil {
		return err
	}
	if err := s.waitControllers(ctx, client); err != nil {
		return err
	}
	if opts.RealNode {
		if err := realnode.Start(ctx, realnode.Config{
			Dir: filepath.Join(c.RunDir, "node"), Kubeconfig: c.Kubeconfig, SourceDir: opts.SourceDir,
			Binaries: c.Binaries, Kube: client.kube, Log: logw,
			RunEnv: s.runEnv, WaitFor: s.waitFor, Problems: NodeProblems,
			Record: func(info *realnode.Info) error { c.Node = info; return c.save() },
		}); err != nil {
			return fmt.Errorf("starting the real node: %w", err)
		}
	}
	if err := c.save(); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(logw, "cluster ready in %s\n", time.Since(started).Round(100*time.Millisecond))
	if !opts.SkipOperators {
		s.reportOperators(ctx)
	}
	return nil
}

// stopRealNode stops the real node, draining its pods first while its kubelet runs.
func (c *Cluster) stopRealNode() error {
	var kube kubernetes.Interface
	if pid, ok := c.Processes["kubelet"]; ok && c.alive("kubelet", pid) {
		if client, err := newClients(c.Kubeconfig); err == nil {
			kube = client.kube
		}
	}
	return realnode.Stop(kube, c.stopComponent, c.Binaries["kube-proxy"])
}

func (c *Cluster) save() error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.RunDir, stateFile), data, 0o644)
}

// LogPath is the file a component writes its output to.
func (c *Cluster) LogPath(name string) string {
	return filepath.Join(c.RunDir, "logs", name+".log")
}

// alive says whether pid is still the process this cluster started for name: a PID reused by
// another program does not count.
func (c *Cluster) alive(name string, pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv0, _, _ := strings.Cut(string(cmdline), "\x00")
	if bin, ok := c.Binaries[name]; !ok || argv0 != bin {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie (state Z) has exited and only waits to be reaped by its parent.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// Stop ends exactly the processes this cluster started (SIGTERM, then SIGKILL after 10 s) and
// removes its run folder.
func (c *Cluster) Stop() error {
	var errs []error
	if c.Node != nil {
		if err := c.stopRealNode(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the real node: %w", err))
		}
	}
	for _, name := range stopOrder {
		if err := c.stopComponent(name); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return os.RemoveAll(c.RunDir)
}

// stopComponent ends the process this cluster started for name, if it still runs.
func (c *Cluster) stopComponent(name string) error {
	pid, ok := c.Processes[name]
	if !ok || !c.alive(name, pid) {
		return nil
	}
	if err := stopProcess(pid, func() bool { return c.alive(name, pid) }); err != nil {
		return fmt.Errorf("stopping %s (pid %d): %w", name, pid, err)
	}
	return nil
}

// Stop stops the cluster recorded in runDir, if any.
func Stop(runDir string) error { return stopRecorded(runDir) }

func stopRecorded(runDir string) error {
	data, err := os.ReadFile(filepath.Join(runDir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return os.RemoveAll(runDir)
	}
	if err != nil {
		return err
	}
	var c Cluster
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(runDir, stateFile), err)
	}
	return c.Stop()
}

func stopProcess(pid int, alive func() bool) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive() {
		if time.Now().After(deadline) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return err
			}
			deadline = time.Now().Add(5 * time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
