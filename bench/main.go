// Command bench measures this provider against kubernetes_manifest (hashicorp/kubernetes),
// kubectl_manifest (alekc/kubectl) and Terraform's own floors (terraform_data, no API call;
// the same configuration served by a provider doing nothing, bench/schemafloor/plugin; this
// provider's schema served by one, bench/schemafloor) on one local cluster with the real
// operators, in one run: apply from empty, plan with refresh
// and no change, a rescale of every elastic job, and destroy, for N jobs of mixed kinds. Every
// tool waits for the same thing: the jobs running on apply and rescale, gone on destroy. It
// reports wall time (median and spread of the runs), API requests per job and watch
// connections (counted by a proxy in front of the API server), the peak resident memory of the
// provider processes and the API server's CPU time, and writes RESULTS.md and scaling.svg.
//
//	cd bench && go run . -n 10,100,300 -runs 3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
)

// A tool is one way of managing the same N jobs with Terraform.
type tool struct {
	name string // column heading
	key  string // its name in -tools, its work folder and its namespace
	// provider is the provider binary name (terraform-provider-NAME) that the RSS wrapper runs,
	// "" for the floors, which make no API request.
	provider string
	config   func(n int) string
	// cliConfig is the CLI configuration file in the work folder, which picks the providers.
	cliConfig string
}

// The names of this provider and of the floors in tools, which the report refers to.
const (
	trainingTool    = "training"
	crowdedTool     = "training beside unrelated pods"
	queuedTool      = "training, queued in Kueue"
	floorTool       = "floor: terraform_data"
	pluginFloorTool = "floor: a plugin doing nothing"
)

var tools = []tool{
	{trainingTool, "training", "training", trainingConfig, cliConfigFile},
	// The same jobs in a namespace that also holds other pods (-unrelated-pods): what a shared
	// namespace costs the provider's waits, refreshes and memory.
	{crowdedTool, "crowded", "training", crowdedConfig, cliConfigFile},
	// The same jobs submitted to a Kueue queue (all but the Frameworks, which Kueue does not run):
	// what the plan's admission prediction costs.
	{queuedTool, "queued", "training", queuedConfig, cliConfigFile},
	{"kubernetes_manifest", "kubernetes", "kubernetes", kubernetesConfig, cliConfigFile},
	{"kubectl_manifest", "kubectl", "kubectl", kubectlConfig, cliConfigFile},
	{floorTool, "floor", "", floorConfig, cliConfigFile},
	{pluginFloorTool, "plugin-floor", "", pluginFloorConfig, pluginFloorCLIConfigFile},
}

// The CLI configurations buildProviders writes: the measured providers (through the RSS
// wrapper), bench/schemafloor in place of this provider, and bench/schemafloor/plugin.
const (
	cliConfigFile            = "terraformrc"
	schemaFloorCLIConfigFile = "terraformrc-schemafloor"
	pluginFloorCLIConfigFile = "terraformrc-pluginfloor"
)

const (
	// opPlanCreate is the plan of an apply from empty, alone: every job's plan checks (placement,
	// Pod Security, a queued job's admission prediction), no refresh.
	opPlanCreate = "plan of the jobs to create"
	opApply      = "apply from empty"
	opPlan       = "plan, refresh, no change"
	// opPlanNoRefresh is the same plan without the refresh: Terraform's and the provider's own
	// cost of planning N resources, with no API call, which puts the refresh's cost apart.
	opPlanNoRefresh = "plan without refresh"
	// opPlanSchemaFloor is opPlan of the training jobs' state with the real provider replaced by
	// bench/schemafloor, which serves the same schema and does nothing: Terraform's own cost of
	// planning N resources of this schema, the least any provider of it can take.
	opPlanSchemaFloor = "plan, this schema, a provider doing nothing"
	// opPlanFramework and opPlanNoRefreshFramework are opPlan and opPlanNoRefresh with the
	// provider's shortcuts off (TF_PROVIDER_TRAINING_SHORTCUTS=off): the plugin framework
	// answering every request, which puts apart what internal/shortcuts buys.
	opPlanFramework          = "plan, refresh, no change; the framework alone"
	opPlanNoRefreshFramework = "plan without refresh; the framework alone"
	opRescale                = "rescale every elastic job"
	opDestroy                = "destroy"
	// opQuery is the operation only this provider has: `terraform query` of its list resources
	// (Terraform 1.14+), which find the jobs with one list request per kind. It runs with
	// queryTerraform.
	opQuery = "query: list every job"
)

var operations = []string{opPlanCreate, opApply, opPlan, opPlanNoRefresh, opPlanFramework, opPlanNoRefreshFramework, opPlanSchemaFloor, opRescale, opQuery, opDestroy}

// queryTerraform is the Terraform (1.14+) that runs opQuery: the one make testacc builds into
// ../.tools, or -query-terraform; without one opQuery is not run.
var queryTerraform string

// A measurement is one operation of one run.
type measurement struct {
	seconds  float64
	requests int64
	// watches is how many WATCH requests the operation made, peakWatches the most open at once.
	watches, peakWatches int64
	rssKiB               int64
	// apiCPU is the API server's CPU time during the operation, in seconds.
	apiCPU float64
	// operators is, after an apply, how long the operators took to report each job running.
	operators operatorTimes
}

// A result is an operation's runs: the median by time, and the fastest and slowest.
type result struct {
	median, min, max measurement
	runs             int
	// cpu is where the provider processes' CPU went in an extra run of the operation, profiled
	// (this provider's plans at profileAt jobs), nil for the others.
	cpu *cpuSummary
}

// profileAt is the number of jobs at which this provider's plans are profiled.
const profileAt = 100

func main() {
	sizes := flag.String("n", "10,100,300", "numbers of jobs")
	runs := flag.Int("runs", 3, "runs per tool and size; the median is reported")
	oneRunAbove := flag.Int("one-run-above", 100, "sizes above this get one run per tool (a run of 300 jobs takes minutes)")
	slowMax := flag.Int("slow-max", 100, "largest number of jobs kubernetes_manifest is run with (it takes minutes per operation)")
	slowRuns := flag.Int("slow-runs", 1, "runs of kubernetes_manifest above 10 jobs")
	only := flag.String("tools", "", "comma-separated tools to run (training,crowded,queued,kubernetes,kubectl,floor,plugin-floor); default all")
	flag.StringVar(&queryTerraform, "query-terraform", defaultQueryTerraform(), "Terraform 1.14+ that runs the query operation; empty: not run")
	mpiQueue := flag.Int("mpi-queue-rate-limit", 0, "mpi-operator's work-queue rate limit and burst (events a second); 0 keeps upstream's defaults, 10 and 100")
	apiQPS := flag.Int("controller-manager-api-qps", 0, "kube-controller-manager's client rate limit (requests a second; burst twice that), which its garbage collector deletes dependents under; 0 keeps upstream's defaults, 20 and 30")
	peersMax := flag.Int("peers-max", 300, "largest number of jobs kubectl_manifest and kubernetes_manifest run with")
	crowdedMax := flag.Int("crowded-max", 100, "largest number of jobs the crowded tool runs with")
	unrelatedPods := flag.Int("unrelated-pods", 5000, "pods of no job in the crowded tool's namespace, made before the first run at its size")
	target := flag.String("target", "bench", "the make target this run is, as the report names it")
	shapesOnly := flag.Bool("schema-shapes", false, "measure only what Terraform's plan owes to the shape of this provider's schemas (bench/schemafloor's shapes), writing -shapes-out")
	shapesOut := flag.String("shapes-out", "RESULTS-shapes.md", "the schema shapes' report file")
	keep := flag.Bool("keep", false, "keep the work folder (each tool's configuration, state and every command's output) and print where it is")
	out := flag.String("out", "RESULTS.md", "report file")
	plot := flag.String("plot", "scaling.svg", "plot file")
	flag.Parse()
	cfg := benchConfig{runs: *runs, oneRunAbove: *oneRunAbove, slowMax: *slowMax, slowRuns: *slowRuns, only: *only, out: *out, plot: *plot, mpiQueue: *mpiQueue, apiQPS: *apiQPS, keep: *keep,
		peersMax: *peersMax, crowdedMax: *crowdedMax, unrelatedPods: *unrelatedPods, target: *target, shapes: *shapesOnly, shapesOut: *shapesOut}
	if err := run(*sizes, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type benchConfig struct {
	runs, oneRunAbove, slowMax, slowRuns int
	only, out, plot                      string
	// commit is the provider's source measured, as sourceCommit says it.
	commit string
	// mpiQueue, when not 0, is mpi-operator's work-queue rate limit and burst.
	mpiQueue int
	// apiQPS, when not 0, is kube-controller-manager's client rate limit (burst twice that).
	apiQPS int
	// keep leaves the work folder in place.
	keep bool
	// peersMax is the largest number of jobs the peers (kubernetes_manifest, kubectl_manifest)
	// run with; crowdedMax the crowded tool's, with unrelatedPods pods beside its jobs.
	peersMax, crowdedMax, unrelatedPods int
	// target is the make target that runs this configuration (bench, bench-scale, ...).
	target string
	// shapes runs the schema-shapes experiment alone, writing shapesOut.
	shapes    bool
	shapesOut string
}

// benchNodes are the bench cluster's simulated nodes: room for every pod of 1,000 jobs after
// the rescale (2,500), with no taint.
func benchNodes(count int) string {
	var b strings.Builder
	for i := range count {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Node
metadata:
  name: bench-node-%[1]d
status:
  capacity: {cpu: "256", memory: 2Ti, pods: "400"}
  allocatable: {cpu: "256", memory: 2Ti, pods: "400"}
  addresses: [{type: InternalIP, address: 127.0.4.%[1]d}, {type: Hostname, address: bench-node-%[1]d}]
`, i+1)
	}
	return b.String()
}

func run(sizes string, cfg benchConfig) error {
	ctx := context.Background()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root := filepath.Dir(wd)
	cfg.commit = sourceCommit(root)
	work, err := os.MkdirTemp("", "training-bench-")
	if err != nil {
		return err
	}
	if cfg.keep {
		logf("the work folder is %s; it is kept", work)
	} else {
		defer func() { _ = os.RemoveAll(work) }()
	}

	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-n: %w", err)
		}
		ns = append(ns, n)
	}

	logf("building the providers and the RSS wrapper")
	if err := buildProviders(root, work); err != nil {
		return err
	}

	opts, err := clustertest.DefaultOptions(wd)
	if err != nil {
		return err
	}
	opts.NodesFile = filepath.Join(work, "nodes.yaml")
	nodes := 8
	if err := os.WriteFile(opts.NodesFile, []byte(benchNodes(nodes)), 0o644); err != nil {
		return err
	}
	if cfg.mpiQueue != 0 {
		opts.MPIOperatorArgs = []string{fmt.Sprintf("--controller-queue-rate-limit=%d", cfg.mpiQueue), fmt.Sprintf("--controller-queue-burst=%d", cfg.mpiQueue)}
	}
	if cfg.apiQPS != 0 {
		opts.ControllerManagerArgs = []string{fmt.Sprintf("--kube-api-qps=%d", cfg.apiQPS), fmt.Sprintf("--kube-api-burst=%d", 2*cfg.apiQPS)}
	}
	logf("starting the local cluster with the operators, on %d simulated nodes", nodes)
	c, _, err := cluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()
	apiPID := c.Processes["kube-apiserver"]

	proxy, err := apiproxy.Start(c.Kubeconfig, apiproxy.Options{})
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := proxy.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}

	if cfg.shapes {
		shapes, err := schemaShapes(work)
		if err != nil {
			return err
		}
		byShape := map[int]map[string][]float64{}
		for _, n := range ns {
			if byShape[n], err = measureShapes(ctx, c, shapes, n, cfg.runs, work, kubeconfig); err != nil {
				return err
			}
		}
		report := renderShapes(shapes, byShape, ns, cfg.runs)
		fmt.Print(report)
		return os.WriteFile(cfg.shapesOut, []byte(report), 0o644)
	}

	results := map[string]map[int]map[string]result{} // tool -> n -> operation
	failures := map[string]string{}                   // tool -> why it could not be measured
	for _, n := range ns {
		// The tools at this size, taken in turn: run 1 of each, then run 2 of each, so that the
		// tools' figures at a size come from the same minutes.
		var sessions []*toolSession
		for _, t := range tools {
			if cfg.only != "" && !strings.Contains(","+cfg.only+",", ","+t.key+",") {
				continue
			}
			r := cfg.runs
			if n > cfg.oneRunAbove {
				r = 1
			}
			if (t.provider == "kubernetes" || t.provider == "kubectl") && n > cfg.peersMax {
				continue
			}
			if t.key == "crowded" {
				if n > cfg.crowdedMax {
					continue
				}
				if err := createUnrelatedPods(ctx, c.Kubeconfig, "bench-"+t.key, cfg.unrelatedPods); err != nil {
					return err
				}
			}
			if t.provider == "kubernetes" {
				if n > cfg.slowMax {
					continue
				}
				if n > 10 {
					r = min(r, cfg.slowRuns)
				}
			}
			if failures[t.name] != "" {
				continue
			}
			session, err := startTool(ctx, c, t, n, r, work, kubeconfig, proxy, apiPID)
			if err != nil {
				return fmt.Errorf("%s with %d jobs: %w", t.name, n, err)
			}
			sessions = append(sessions, session)
		}
		for r := 0; slices.ContainsFunc(sessions, func(s *toolSession) bool { return r < s.runs }); r++ {
			for _, s := range sessions {
				t := s.t
				if r >= s.runs || failures[t.name] != "" {
					continue
				}
				err := s.run(ctx, r)
				var failed *toolFailure
				if errors.As(err, &failed) && t.provider != "training" {
					// A peer that cannot manage the jobs is reported as such, not measured further.
					logf("%s failed with %d jobs: %s", t.name, n, failed.summary)
					failures[t.name] = fmt.Sprintf("with %d jobs, `terraform %s` failed: %s", n, failed.command, failed.summary)
					continue
				}
				if err != nil {
					return fmt.Errorf("%s with %d jobs: %w", t.name, n, err)
				}
			}
		}
		for _, s := range sessions {
			if t := s.t; failures[t.name] == "" {
				if results[t.name] == nil {
					results[t.name] = map[int]map[string]result{}
				}
				results[t.name][n] = s.results()
			}
		}
	}
	report := renderReport(results, failures, ns, cfg, nodes)
	fmt.Print(report)
	if err := os.WriteFile(cfg.plot, []byte(renderPlot(results, ns)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(cfg.out, []byte(report), 0o644)
}

func logf(format string, args ...any) {
	_, _ = fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// sourceCommit names the commit of the source in root that the bench builds, and says so when
// the source differs from it; "an unknown commit" outside a git checkout.
func sourceCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "an unknown commit"
	}
	commit := "commit " + strings.TrimSpace(string(out))
	if status, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(status) > 0 {
		commit += " with uncommitted changes"
	}
	return commit
}
