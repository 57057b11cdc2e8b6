// Command localcluster builds, starts and stops the local cluster the provider is tested on.
//
//	localcluster up     build what is missing, start (or reuse) the cluster, print the KUBECONFIG line
//	localcluster down   stop the processes it started and remove the cluster's data
//	localcluster build  only build the binaries (and, with -real-node, the real node's Debian layers)
//	localcluster volume NAME FOLDER   a PersistentVolumeClaim NAME in default bound to FOLDER of this machine
//	localcluster worker NAME   start (or reuse) a second cluster, a MultiKueue worker, whose
//	                           kubeconfig the running cluster's Kueue finds in Secret NAME
//
// With -real-node (or TRAINING_REAL_NODE=1) the cluster also has the real node, where containers run.
// With -generation previous (or TRAINING_CLUSTER_GENERATION=previous) every part is built and run
// at the release before the current one (cluster/generations/previous).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
)

func main() {
	fs := flag.NewFlagSet("localcluster", flag.ExitOnError)
	dir := fs.String("dir", envOr("TRAINING_CLUSTER_DIR", ".cluster"), "folder for the running cluster's state, logs and kubeconfig")
	cache := fs.String("cache", os.Getenv("TRAINING_CLUSTER_CACHE"), "folder for the built binaries (default: DIR/bin)")
	nodes := fs.String("nodes", os.Getenv("TRAINING_CLUSTER_NODES"), "node layout file replacing the default nodes.yaml")
	realNode := fs.Bool("real-node", os.Getenv(realnode.Env) == "1", "add the real node, where containers run (root, cgroups, make real-node-packages)")
	generation := fs.String("generation", os.Getenv(cluster.GenerationEnv), "the versions every part runs at: current (the default) or previous")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: localcluster [flags] up|down|build|volume NAME FOLDER\n")
		fs.PrintDefaults()
	}
	if len(os.Args) < 2 {
		fs.Usage()
		os.Exit(2)
	}
	verb := os.Args[1]
	_ = fs.Parse(os.Args[2:])
	if verb == "volume" {
		if err := volume(*dir, fs.Args()); err != nil {
			_, _ = fmt.Fprintln(os.Stderr, "localcluster:", err)
			os.Exit(1)
		}
		return
	}

	if verb == "worker" {
		if err := worker(*dir, *cache, *generation, fs.Args()); err != nil {
			_, _ = fmt.Fprintln(os.Stderr, "localcluster:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(verb, *dir, *cache, *nodes, *generation, *realNode); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(verb, dir, cache, nodes, generation string, realNode bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, cache, source, err := locate(dir, cache)
	if err != nil {
		return err
	}
	opts := cluster.Options{
		SourceDir:  source,
		CacheDir:   cache,
		RunDir:     filepath.Join(dir, "run"),
		NodesFile:  nodes,
		Log:        os.Stderr,
		RealNode:   realNode,
		Generation: generation,
	}
	switch verb {
	case "build":
		gen, err := cluster.CheckGeneration(generation)
		if err != nil {
			return err
		}
		if !realNode {
			_, err = cluster.Binaries(ctx, source, gen, cache, os.Stderr)
			return err
		}
		// The real node's Debian layers wait on the network while the Go builds use the processor.
		prepared := make(chan error, 1)
		go func() { prepared <- images.Prepare(ctx, os.Stderr) }()
		_, err = cluster.Binaries(ctx, source, gen, cache, os.Stderr)
		return errors.Join(err, <-prepared)
	case "up":
		c, reused, err := cluster.Start(ctx, opts)
		if err != nil {
			return err
		}
		if reused {
			_, _ = fmt.Fprintln(os.Stderr, "the cluster is already running; reusing it")
		}
		fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig)
		if c.Node != nil {
			// The real node's images, by role: TRAINING_IMAGE_TRAINING_ETCD=kubetrain.local/...
			for _, role := range slices.Sorted(maps.Keys(c.Node.Images)) {
				fmt.Printf("export TRAINING_IMAGE_%s=%s\n", strings.ToUpper(strings.ReplaceAll(role, "-", "_")), c.Node.Images[role])
			}
		}
		return nil
	case "down":
		workers, err := filepath.Glob(workerDir(dir, "*"))
		if err != nil {
			return err
		}
		for _, w := range workers {
			if err := cluster.Stop(w); err != nil {
				return fmt.Errorf("stopping worker %s: %w", filepath.Base(w), err)
			}
		}
		return cluster.Stop(opts.RunDir)
	default:
		return fmt.Errorf("unknown command %q (want up, down or build)", verb)
	}
}

// volume makes a PersistentVolumeClaim in the default namespace of the running cluster, bound to
// a folder of this machine that the real node's pods share.
func volume(dir string, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: localcluster volume NAME FOLDER")
	}
	folder, err := filepath.Abs(args[1])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	return cluster.SharedVolume(context.Background(), filepath.Join(dir, "run", "kubeconfig"), "default", args[0], folder)
}

// worker starts (or reuses) the worker cluster NAME in DIR/workers/NAME, with the default node
// layout and every operator, and stores its kubeconfig in the running cluster's Secret NAME.
func worker(dir, cache, generation string, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: localcluster worker NAME")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, cache, source, err := locate(dir, cache)
	if err != nil {
		return err
	}
	manager := filepath.Join(dir, "run")
	running, err := cluster.Running(ctx, manager)
	if err != nil {
		return err
	}
	if running == nil {
		return fmt.Errorf("no cluster runs in %s to register the worker with (localcluster up first)", manager)
	}
	if generation == "" {
		generation = running.Generation // a worker runs what its manager runs
	}
	w, _, err := cluster.Start(ctx, cluster.Options{SourceDir: source, CacheDir: cache, RunDir: workerDir(dir, args[0]), Log: os.Stderr, Generation: generation})
	if err != nil {
		return err
	}
	if err := cluster.RegisterWorker(ctx, filepath.Join(manager, "kubeconfig"), args[0], w); err != nil {
		return err
	}
	fmt.Printf("export WORKER_KUBECONFIG=%s\n", w.Kubeconfig)
	return nil
}

// locate makes dir absolute and gives the binaries' cache (DIR/bin unless set) and the
// cluster module's folder, found from the working folder.
func locate(dir, cache string) (absDir, cacheDir, source string, err error) {
	if absDir, err = filepath.Abs(dir); err != nil {
		return "", "", "", err
	}
	if cacheDir = cache; cacheDir == "" {
		cacheDir = filepath.Join(absDir, "bin")
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", "", err
	}
	source, err = cluster.FindSourceDir(wd)
	return absDir, cacheDir, source, err
}

// workerDir is the run folder of the worker cluster name (a glob pattern for all of them).
func workerDir(dir, name string) string { return filepath.Join(dir, "workers", name) }

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
