// Command bench measures this provider against kubernetes_manifest (hashicorp/kubernetes),
// kubectl_manifest (alekc/kubectl) and Terraform's own floor (terraform_data, no API call) on
// the same local cluster, in one run: apply from empty, plan with refresh and no change, a
// rescale of every job, and destroy, for N MPIJobs each. It reports wall time (median of the
// runs), API requests per job (counted by a proxy in front of the API server) and the peak
// resident memory of the provider processes, and writes RESULTS.md.
//
//	cd bench && go run . -n 10,50,100 -runs 3
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// A tool is one way of managing the same N MPIJobs with Terraform.
type tool struct {
	name     string // column heading
	provider string // provider binary name (terraform-provider-NAME), "" for the floor
	config   func(n int) string
}

var tools = []tool{
	{"training_mpi_job", "training", trainingConfig},
	{"kubernetes_manifest", "kubernetes", kubernetesConfig},
	{"kubectl_manifest", "kubectl", kubectlConfig},
	{"floor: terraform_data", "", floorConfig},
}

var operations = []string{"apply from empty", "plan, refresh, no change", "rescale every job", "query: list every job", "destroy"}

// queryOp is the operation only this provider has: `terraform query` of its list resource
// (Terraform 1.14+), which finds the jobs with one list request. It runs with queryTerraform.
const queryOp = "query: list every job"

// queryTerraform is the Terraform (1.14+) that runs queryOp: the one make testacc builds into
// ../.tools, or -query-terraform; without one queryOp is not run.
var queryTerraform string

type measurement struct {
	seconds  float64
	requests int64
	rssKiB   int64
}

func main() {
	sizes := flag.String("n", "10,50,100", "numbers of jobs")
	runs := flag.Int("runs", 3, "runs per tool and size; the median is reported")
	slowRuns := flag.Int("slow-runs", 1, "runs of kubernetes_manifest above 10 jobs (it takes minutes per run)")
	only := flag.String("tools", "", "comma-separated providers to run (training,kubernetes,kubectl,floor); default all")
	flag.StringVar(&queryTerraform, "query-terraform", defaultQueryTerraform(), "Terraform 1.14+ that runs the query operation; empty: not run")
	out := flag.String("out", "RESULTS.md", "report file")
	flag.Parse()
	if err := run(*sizes, *runs, *slowRuns, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(sizes string, runs, slowRuns int, only, out string) error {
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
	defer func() { _ = os.RemoveAll(work) }()

	logf("building the providers and the RSS wrapper")
	if err := buildProviders(root, work); err != nil {
		return err
	}

	opts, err := clustertest.DefaultOptions(wd)
	if err != nil {
		return err
	}
	opts.SkipOperators = true // objects only: no pods, so operators' load does not skew the timings
	logf("starting the local cluster (no operators)")
	c, _, err := cluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()

	proxy, err := apiproxy.Start(c.Kubeconfig, apiproxy.Options{})
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := proxy.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}
	rawGET, err := measureRawGETs(c.Kubeconfig, 50)
	if err != nil {
		return err
	}

	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-n: %w", err)
		}
		ns = append(ns, n)
	}
	results := map[string]map[int]map[string]measurement{} // tool -> n -> operation -> median
	for _, n := range ns {
		for _, t := range tools {
			if only != "" && !strings.Contains(","+only+",", ","+providerKey(t)+",") {
				continue
			}
			r := runs
			if t.provider == "kubernetes" && n > 10 && slowRuns < runs {
				r = slowRuns
			}
			m, err := measureTool(ctx, c, t, n, r, work, kubeconfig, proxy)
			if err != nil {
				return fmt.Errorf("%s with %d jobs: %w", t.name, n, err)
			}
			if results[t.name] == nil {
				results[t.name] = map[int]map[string]measurement{}
			}
			results[t.name][n] = m
		}
	}
	report := renderReport(results, ns, runs, slowRuns, rawGET)
	fmt.Print(report)
	return os.WriteFile(out, []byte(report), 0o644)
}

func providerKey(t tool) string {
	if t.provider == "" {
		return "floor"
	}
	return t.provider
}

func logf(format string, args ...any) {
	_, _ = fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// buildProviders builds the three providers and places the RSS wrapper, under their binary
// names, in WORK/overrides, which the CLI config's dev_overrides point at.
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
	cliConfig := fmt.Sprintf(`provider_installation {
  dev_overrides {
    "kubetrain/training"   = %[1]q
    "hashicorp/kubernetes" = %[1]q
    "alekc/kubectl"        = %[1]q
  }
  direct {}
}
`, overrides)
	return os.WriteFile(filepath.Join(work, "terraformrc"), []byte(cliConfig), 0o644)
}

// measureTool runs apply, plan, rescale and destroy runs times for n jobs and returns the
// median of each operation.
func measureTool(ctx context.Context, c *cluster.Cluster, t tool, n, runs int, work, kubeconfig string, proxy *apiproxy.Proxy) (map[string]measurement, error) {
	dir := filepath.Join(work, fmt.Sprintf("%s-%d", providerKey(t), n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(t.config(n)), 0o644); err != nil {
		return nil, err
	}
	if t.provider == "training" {
		if err := os.WriteFile(filepath.Join(dir, "jobs.tfquery.hcl"), []byte(trainingQuery), 0o644); err != nil {
			return nil, err
		}
	}
	if err := ensureNamespace(ctx, c.Kubeconfig, "bench-"+providerKey(t)); err != nil {
		return nil, err
	}
	rssLog := filepath.Join(dir, "rss.log")
	env := append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+filepath.Join(work, "terraformrc"),
		"TF_IN_AUTOMATION=1",
		"KUBECONFIG="+kubeconfig, "KUBE_CONFIG_PATH="+kubeconfig,
		"BENCH_RSS_LOG="+rssLog,
		"BENCH_REAL_TRAINING="+filepath.Join(work, "real", "training"),
		"BENCH_REAL_KUBERNETES="+filepath.Join(work, "real", "kubernetes"),
		"BENCH_REAL_KUBECTL="+filepath.Join(work, "real", "kubectl"),
	)
	samples := map[string][]measurement{}
	for r := 0; r < runs; r++ {
		type step struct {
			op, cli string
			args    []string
		}
		steps := []step{
			{operations[0], "terraform", []string{"apply", "-auto-approve", "-var", "workers=2"}},
			{operations[1], "terraform", []string{"plan", "-detailed-exitcode", "-var", "workers=2"}},
			{operations[2], "terraform", []string{"apply", "-auto-approve", "-var", "workers=3"}},
		}
		if t.provider == "training" && queryTerraform != "" {
			steps = append(steps, step{queryOp, queryTerraform, []string{"query", "-var", "workers=3"}})
		}
		steps = append(steps, step{operations[4], "terraform", []string{"destroy", "-auto-approve", "-var", "workers=3"}})
		for _, st := range steps {
			_ = os.Remove(rssLog)
			proxy.ResetCounts()
			start := time.Now()
			args := st.args
			if st.op != queryOp {
				args = append(args, "-input=false")
			}
			cmd := exec.CommandContext(ctx, st.cli, append(args, "-no-color")...)
			cmd.Dir, cmd.Env = dir, env
			output, err := cmd.CombinedOutput()
			elapsed := time.Since(start).Seconds()
			if err != nil {
				return nil, fmt.Errorf("terraform %s: %w\n%s", strings.Join(st.args, " "), err, tailLines(string(output), 30))
			}
			m := measurement{seconds: elapsed, requests: proxy.Requests(), rssKiB: peakRSS(rssLog)}
			samples[st.op] = append(samples[st.op], m)
			logf("%-22s n=%-3d run %d  %-26s %6.2f s  %5d requests  %4d MiB", t.name, n, r+1, st.op, m.seconds, m.requests, m.rssKiB/1024)
		}
	}
	medians := map[string]measurement{}
	for op, ms := range samples {
		medians[op] = median(ms)
	}
	return medians, nil
}

func median(ms []measurement) measurement {
	sort.Slice(ms, func(i, j int) bool { return ms[i].seconds < ms[j].seconds })
	return ms[len(ms)/2]
}

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

// measureRawGETs times n sequential GETs over one client-go connection: the API's own cost of
// reading n jobs, to set beside the floor.
func measureRawGETs(kubeconfig string, n int) (time.Duration, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, err
	}
	cfg.QPS, cfg.Burst = 1000, 1000 // client-go's default 5 QPS would measure its own limiter
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return 0, err
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
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
