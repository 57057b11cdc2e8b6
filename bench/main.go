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
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

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
	floorTool       = "floor: terraform_data"
	pluginFloorTool = "floor: a plugin doing nothing"
)

var tools = []tool{
	{trainingTool, "training", "training", trainingConfig, cliConfigFile},
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
	opApply = "apply from empty"
	opPlan  = "plan, refresh, no change"
	// opPlanNoRefresh is the same plan without the refresh: Terraform's and the provider's own
	// cost of planning N resources, with no API call, which puts the refresh's cost apart.
	opPlanNoRefresh = "plan without refresh"
	// opPlanSchemaFloor is opPlan of the training jobs' state with the real provider replaced by
	// bench/schemafloor, which serves the same schema and does nothing: Terraform's own cost of
	// planning N resources of this schema, the least any provider of it can take.
	opPlanSchemaFloor = "plan, this schema, a provider doing nothing"
	opRescale         = "rescale every elastic job"
	opDestroy         = "destroy"
	// opQuery is the operation only this provider has: `terraform query` of its list resources
	// (Terraform 1.14+), which find the jobs with one list request per kind. It runs with
	// queryTerraform.
	opQuery = "query: list every job"
)

var operations = []string{opApply, opPlan, opPlanNoRefresh, opPlanSchemaFloor, opRescale, opQuery, opDestroy}

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
}

func main() {
	sizes := flag.String("n", "10,100,300", "numbers of jobs")
	runs := flag.Int("runs", 3, "runs per tool and size; the median is reported")
	oneRunAbove := flag.Int("one-run-above", 100, "sizes above this get one run per tool (a run of 300 jobs takes minutes)")
	slowMax := flag.Int("slow-max", 100, "largest number of jobs kubernetes_manifest is run with (it takes minutes per operation)")
	slowRuns := flag.Int("slow-runs", 1, "runs of kubernetes_manifest above 10 jobs")
	only := flag.String("tools", "", "comma-separated tools to run (training,kubernetes,kubectl,floor,plugin-floor); default all")
	flag.StringVar(&queryTerraform, "query-terraform", defaultQueryTerraform(), "Terraform 1.14+ that runs the query operation; empty: not run")
	mpiQueue := flag.Int("mpi-queue-rate-limit", 0, "mpi-operator's work-queue rate limit and burst (events a second); 0 keeps upstream's defaults, 10 and 100")
	apiQPS := flag.Int("controller-manager-api-qps", 0, "kube-controller-manager's client rate limit (requests a second; burst twice that), which its garbage collector deletes dependents under; 0 keeps upstream's defaults, 20 and 30")
	keep := flag.Bool("keep", false, "keep the work folder (each tool's configuration, state and every command's output) and print where it is")
	out := flag.String("out", "RESULTS.md", "report file")
	plot := flag.String("plot", "scaling.svg", "plot file")
	flag.Parse()
	cfg := benchConfig{runs: *runs, oneRunAbove: *oneRunAbove, slowMax: *slowMax, slowRuns: *slowRuns, only: *only, out: *out, plot: *plot, mpiQueue: *mpiQueue, apiQPS: *apiQPS, keep: *keep}
	if err := run(*sizes, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type benchConfig struct {
	runs, oneRunAbove, slowMax, slowRuns int
	only, out, plot                      string
	// mpiQueue, when not 0, is mpi-operator's work-queue rate limit and burst.
	mpiQueue int
	// apiQPS, when not 0, is kube-controller-manager's client rate limit (burst twice that).
	apiQPS int
	// keep leaves the work folder in place.
	keep bool
}

// benchNodes are the bench cluster's simulated nodes: room for every pod of 300 jobs after the
// rescale, with no taint.
func benchNodes(count int) string {
	var b strings.Builder
	for i := range count {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Node
metadata:
  name: bench-node-%[1]d
status:
  capacity: {cpu: "64", memory: 512Gi, pods: "250"}
  allocatable: {cpu: "64", memory: 512Gi, pods: "250"}
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

	results := map[string]map[int]map[string]result{} // tool -> n -> operation
	failures := map[string]string{}                   // tool -> why it could not be measured
	for _, n := range ns {
		for _, t := range tools {
			if cfg.only != "" && !strings.Contains(","+cfg.only+",", ","+t.key+",") {
				continue
			}
			r := cfg.runs
			if n > cfg.oneRunAbove {
				r = 1
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
			m, err := measureTool(ctx, c, t, n, r, work, kubeconfig, proxy, apiPID)
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
			if results[t.name] == nil {
				results[t.name] = map[int]map[string]result{}
			}
			results[t.name][n] = m
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

// buildProviders builds the three measured providers and places the RSS wrapper, under their
// binary names, in WORK/overrides, which the CLI config's dev_overrides point at; and the two
// do-nothing providers of the floors, each with a CLI config of its own.
func buildProviders(root, work string) error {
	overrides := filepath.Join(work, "overrides")
	if err := os.MkdirAll(overrides, 0o755); err != nil {
		return err
	}
	builds := []struct{ dir, pkg, out string }{
		{root, ".", filepath.Join(work, "real", "training")},
		{filepath.Join(root, "bench", "peers", "kubernetes"), "github.com/hashicorp/terraform-provider-kubernetes", filepath.Join(work, "real", "kubernetes")},
		{filepath.Join(root, "bench", "peers", "kubectl"), "github.com/alekc/terraform-provider-kubectl", filepath.Join(work, "real", "kubectl")},
		{filepath.Join(root, "bench"), "./rsswrap", filepath.Join(work, "rsswrap")},
		{filepath.Join(root, "bench", "schemafloor"), ".", filepath.Join(work, "schemafloor", "terraform-provider-training")},
		{filepath.Join(root, "bench", "schemafloor"), "./plugin", filepath.Join(work, "pluginfloor", "terraform-provider-training")},
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w\n%s", b.pkg, err, out)
		}
	}
	wrapper, err := os.ReadFile(filepath.Join(work, "rsswrap"))
	if err != nil {
		return err
	}
	for _, name := range []string{"training", "kubernetes", "kubectl"} {
		if err := os.WriteFile(filepath.Join(overrides, "terraform-provider-"+name), wrapper, 0o755); err != nil {
			return err
		}
	}
	if err := writeCLIConfig(filepath.Join(work, cliConfigFile), overrides, "kubetrain/training", "hashicorp/kubernetes", "alekc/kubectl"); err != nil {
		return err
	}
	if err := writeCLIConfig(filepath.Join(work, schemaFloorCLIConfigFile), filepath.Join(work, "schemafloor"), "kubetrain/training"); err != nil {
		return err
	}
	return writeCLIConfig(filepath.Join(work, pluginFloorCLIConfigFile), filepath.Join(work, "pluginfloor"), "kubetrain/training")
}

// writeCLIConfig writes a CLI configuration that takes the providers of sources from dir.
func writeCLIConfig(path, dir string, sources ...string) error {
	var b strings.Builder
	b.WriteString("provider_installation {\n  dev_overrides {\n")
	for _, source := range sources {
		fmt.Fprintf(&b, "    %q = %q\n", source, dir)
	}
	b.WriteString("  }\n  direct {}\n}\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// measureTool runs apply, the plans, rescale, (query) and destroy runs times for n jobs; the
// training tool's plans include the schema floor's. The training tool runs first at each size:
// after its first apply and rescale its objects are read back as the peers' manifests.
func measureTool(ctx context.Context, c *cluster.Cluster, t tool, n, runs int, work, kubeconfig string, proxy *apiproxy.Proxy, apiPID int) (map[string]result, error) {
	dir := filepath.Join(work, fmt.Sprintf("%s-%d", t.key, n))
	manifests := filepath.Join(work, fmt.Sprintf("manifests-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(t.config(n)), 0o644); err != nil {
		return nil, err
	}
	if t.provider == "training" {
		if err := os.WriteFile(filepath.Join(dir, "jobs.tfquery.hcl"), []byte(trainingQuery()), 0o644); err != nil {
			return nil, err
		}
	}
	namespace := "bench-" + t.key
	if err := ensureNamespace(ctx, c.Kubeconfig, namespace); err != nil {
		return nil, err
	}
	rssLog := filepath.Join(dir, "rss.log")
	env := append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+filepath.Join(work, t.cliConfig),
		"TF_IN_AUTOMATION=1",
		"KUBECONFIG="+kubeconfig, "KUBE_CONFIG_PATH="+kubeconfig,
		"BENCH_RSS_LOG="+rssLog,
		"BENCH_REAL_TRAINING="+filepath.Join(work, "real", "training"),
		"BENCH_REAL_KUBERNETES="+filepath.Join(work, "real", "kubernetes"),
		"BENCH_REAL_KUBECTL="+filepath.Join(work, "real", "kubectl"),
		"TF_VAR_manifests="+manifests,
	)
	samples := map[string][]measurement{}
	for r := 0; r < runs; r++ {
		type step struct {
			op, cli string
			args    []string
			// dump is the folder the training tool's objects are read back into after the step.
			dump string
			// cliConfig, when set, replaces the CLI configuration (and so the providers).
			cliConfig string
		}
		steps := []step{
			{opApply, "terraform", []string{"apply", "-auto-approve", "-var", "workers=1"}, "w1", ""},
			{opPlan, "terraform", []string{"plan", "-detailed-exitcode", "-var", "workers=1"}, "", ""},
			{opPlanNoRefresh, "terraform", []string{"plan", "-refresh=false", "-detailed-exitcode", "-var", "workers=1"}, "", ""},
		}
		if t.provider == "training" {
			steps = append(steps, step{opPlanSchemaFloor, "terraform", []string{"plan", "-detailed-exitcode", "-var", "workers=1"}, "", filepath.Join(work, schemaFloorCLIConfigFile)})
		}
		steps = append(steps, step{opRescale, "terraform", []string{"apply", "-auto-approve", "-var", "workers=2"}, "w2", ""})
		if t.provider == "training" && queryTerraform != "" {
			steps = append(steps, step{opQuery, queryTerraform, []string{"query", "-var", "workers=2"}, "", ""})
		}
		steps = append(steps, step{opDestroy, "terraform", []string{"destroy", "-auto-approve", "-var", "workers=2"}, "", ""})
		for _, st := range steps {
			_ = os.Remove(rssLog)
			proxy.ResetCounts()
			cpuBefore := processCPU(apiPID)
			start := time.Now()
			args := st.args
			if st.op != opQuery {
				args = append(args, "-input=false")
			}
			cmd := exec.CommandContext(ctx, st.cli, append(args, "-no-color")...)
			cmd.Dir, cmd.Env = dir, env
			if st.cliConfig != "" {
				cmd.Env = append(slices.Clone(env), "TF_CLI_CONFIG_FILE="+st.cliConfig)
			}
			output, err := cmd.CombinedOutput()
			elapsed := time.Since(start).Seconds()
			logName := fmt.Sprintf("%s-run%d.log", strings.NewReplacer(" ", "-", ",", "", ":", "").Replace(st.op), r+1)
			if werr := os.WriteFile(filepath.Join(dir, logName), output, 0o644); werr != nil {
				return nil, werr
			}
			if err != nil {
				// Leave nothing behind for the next tool.
				destroy := exec.CommandContext(ctx, "terraform", "destroy", "-auto-approve", "-input=false", "-no-color", "-var", "workers=1")
				destroy.Dir, destroy.Env = dir, env
				_ = destroy.Run()
				return nil, &toolFailure{command: strings.Join(st.args, " "), summary: errorSummary(string(output)),
					err: fmt.Errorf("terraform %s: %w\n%s", strings.Join(st.args, " "), err, tailLines(string(output), 30))}
			}
			m := measurement{
				seconds: elapsed, requests: proxy.Requests(), rssKiB: peakRSS(rssLog),
				peakWatches: proxy.PeakWatches(), apiCPU: processCPU(apiPID) - cpuBefore,
			}
			for _, count := range proxy.WatchPaths() {
				m.watches += count
			}
			if st.op == opApply && t.provider != "" {
				if m.operators, err = readOperatorTimes(ctx, c.Kubeconfig, namespace); err != nil {
					logf("reading the operators' times: %v", err)
				}
			}
			samples[st.op] = append(samples[st.op], m)
			logf("%-22s n=%-3d run %d  %-26s %7.2f s  %5d requests  %3d watches  %4d MiB  API CPU %5.1f s %s",
				t.name, n, r+1, st.op, m.seconds, m.requests, m.watches, m.rssKiB/1024, m.apiCPU, m.operators.summary())
			if t.provider == "training" && r == 0 && st.dump != "" {
				if err := dumpManifests(ctx, c.Kubeconfig, namespace, filepath.Join(manifests, st.dump)); err != nil {
					return nil, err
				}
			}
		}
	}
	results := map[string]result{}
	for op, ms := range samples {
		sort.Slice(ms, func(i, j int) bool { return ms[i].seconds < ms[j].seconds })
		results[op] = result{median: ms[len(ms)/2], min: ms[0], max: ms[len(ms)-1], runs: len(ms)}
	}
	return results, nil
}

// toolFailure is a terraform command of a tool that failed.
type toolFailure struct {
	command, summary string
	err              error
}

func (f *toolFailure) Error() string { return f.err.Error() }

// errorSummary is the first error Terraform printed and its explanation (the first paragraph
// after it that is not the configuration it points at), on one line.
func errorSummary(output string) string {
	lines := strings.Split(output, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "Error: ") {
			continue
		}
		var paragraph []string
		for _, m := range lines[i+1:] {
			m = strings.TrimSpace(m)
			switch {
			case strings.HasPrefix(m, "Error: "):
			case m == "" && len(paragraph) > 0:
			case m == "":
				continue
			case len(paragraph) == 0 && (strings.HasPrefix(m, "with ") || strings.HasPrefix(m, "on ") || strings.ContainsAny(m, "│├")):
				continue
			default:
				paragraph = append(paragraph, m)
				continue
			}
			break
		}
		return strings.TrimSpace(l + " " + strings.Join(paragraph, " "))
	}
	return tailLines(output, 3)
}

// processCPU is the CPU time (user and system) a process has used, in seconds, or 0 if it
// cannot be read.
func processCPU(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, field 2, is in parentheses and may hold spaces: fields count after it.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks
}

// clockTicks is the kernel's USER_HZ, which /proc/PID/stat counts CPU time in (100 on Linux).
const clockTicks = 100

func peakRSS(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	var peak int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 {
			if kib, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kib > peak {
				peak = kib
			}
		}
	}
	return peak
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func ensureNamespace(ctx context.Context, kubeconfig, name string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		return err
	}
	return nil
}

// defaultQueryTerraform is the newest Terraform make testacc built into ../.tools, or "".
func defaultQueryTerraform() string {
	found, _ := filepath.Glob(filepath.Join("..", ".tools", "terraform-v*", "terraform"))
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	abs, err := filepath.Abs(found[len(found)-1])
	if err != nil {
		return ""
	}
	return abs
}

// queryVersion names the Terraform that runs the query operation.
func queryVersion() string {
	if queryTerraform == "" {
		return "(none given: not run)"
	}
	return strings.TrimPrefix(filepath.Base(filepath.Dir(queryTerraform)), "terraform-")
}
