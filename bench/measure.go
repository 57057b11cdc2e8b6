package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
)

// toolSession measures one tool at one size, a run at a time, so that the caller can take the
// runs of the tools at a size in turn (run 1 of each, then run 2 of each): each ratio between
// tools then compares runs of the same minutes, not groups taken minutes apart on a machine where
// one command's runs differ by up to 30%.
type toolSession struct {
	c                               *cluster.Cluster
	t                               tool
	n, runs                         int // the jobs, and the runs the tool takes at this size
	work, dir, manifests, namespace string
	rssLog                          string
	env                             []string
	proxy                           *apiproxy.Proxy
	apiPID                          int
	samples                         map[string][]measurement
	cpu                             map[string]cpuSummary // the profiled operations' CPU, at profileAt jobs
}

// startTool prepares the tool's folder and namespace for runs runs of n jobs.
func startTool(ctx context.Context, c *cluster.Cluster, t tool, n, runs int, work, kubeconfig string, proxy *apiproxy.Proxy, apiPID int) (*toolSession, error) {
	dir := filepath.Join(work, fmt.Sprintf("%s-%d", t.key, n))
	manifests := filepath.Join(work, fmt.Sprintf("manifests-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(t.config(n)), 0o644); err != nil {
		return nil, err
	}
	if t.key == "training" {
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
	return &toolSession{c: c, t: t, n: n, runs: runs, work: work, dir: dir, manifests: manifests, namespace: namespace, rssLog: rssLog, env: env,
		proxy: proxy, apiPID: apiPID, samples: map[string][]measurement{}, cpu: map[string]cpuSummary{}}, nil
}

// shortcutsEnv is the provider's switch of its shortcuts (internal/shortcuts.Env).
const shortcutsEnv = "TF_PROVIDER_TRAINING_SHORTCUTS"

// run takes run r (from 0) of apply, the plans, rescale, (query) and destroy; the training
// tool's plans include the schema floor's. The training tool's run 0 comes first at each size:
// after its apply and rescale its objects are read back as the peers' manifests.
func (s *toolSession) run(ctx context.Context, r int) error {
	type step struct {
		op, cli string
		args    []string
		// dump is the folder the training tool's objects are read back into after the step.
		dump string
		// cliConfig, when set, replaces the CLI configuration (and so the providers).
		cliConfig string
		// env is added to the CLI's environment (and so the provider's).
		env []string
	}
	var steps []step
	if s.t.key == "training" || s.t.key == "queued" {
		steps = append(steps, step{opPlanCreate, "terraform", []string{"plan", "-var", "workers=1"}, "", "", nil})
	}
	steps = append(steps, []step{
		{opApply, "terraform", []string{"apply", "-auto-approve", "-var", "workers=1"}, "w1", "", nil},
		{opPlan, "terraform", []string{"plan", "-detailed-exitcode", "-var", "workers=1"}, "", "", nil},
		{opPlanNoRefresh, "terraform", []string{"plan", "-refresh=false", "-detailed-exitcode", "-var", "workers=1"}, "", "", nil},
	}...)
	if s.t.key == "training" {
		off := []string{shortcutsEnv + "=off"}
		steps = append(steps,
			step{opPlanFramework, "terraform", []string{"plan", "-detailed-exitcode", "-var", "workers=1"}, "", "", off},
			step{opPlanNoRefreshFramework, "terraform", []string{"plan", "-refresh=false", "-detailed-exitcode", "-var", "workers=1"}, "", "", off},
			step{opPlanSchemaFloor, "terraform", []string{"plan", "-detailed-exitcode", "-var", "workers=1"}, "", filepath.Join(s.work, schemaFloorCLIConfigFile), nil})
	}
	if s.t.key != "queued" { // a queued job's new worker count is a replacement (Kueue requeues it): not the others' rescale
		steps = append(steps, step{opRescale, "terraform", []string{"apply", "-auto-approve", "-var", "workers=2"}, "w2", "", nil})
	}
	if s.t.key == "training" && queryTerraform != "" {
		steps = append(steps, step{opQuery, queryTerraform, []string{"query", "-var", "workers=2"}, "", "", nil})
	}
	steps = append(steps, step{opDestroy, "terraform", []string{"destroy", "-auto-approve", "-var", "workers=2"}, "", "", nil})
	for _, st := range steps {
		_ = os.Remove(s.rssLog)
		s.proxy.ResetCounts()
		cpuBefore := processCPU(s.apiPID)
		start := time.Now()
		args := st.args
		if st.op != opQuery {
			args = append(args, "-input=false")
		}
		cmd := exec.CommandContext(ctx, st.cli, append(args, "-no-color")...)
		cmd.Dir, cmd.Env = s.dir, append(slices.Clone(s.env), st.env...)
		if st.cliConfig != "" {
			cmd.Env = append(cmd.Env, "TF_CLI_CONFIG_FILE="+st.cliConfig)
		}
		output, err := cmd.CombinedOutput()
		elapsed := time.Since(start).Seconds()
		logName := fmt.Sprintf("%s-run%d.log", strings.NewReplacer(" ", "-", ",", "", ":", "").Replace(st.op), r+1)
		if werr := os.WriteFile(filepath.Join(s.dir, logName), output, 0o644); werr != nil {
			return werr
		}
		if err != nil {
			// Leave nothing behind for the next tool.
			destroy := exec.CommandContext(ctx, "terraform", "destroy", "-auto-approve", "-input=false", "-no-color", "-var", "workers=1")
			destroy.Dir, destroy.Env = s.dir, s.env
			_ = destroy.Run()
			return &toolFailure{command: strings.Join(st.args, " "), summary: errorSummary(string(output)),
				err: fmt.Errorf("terraform %s: %w\n%s", strings.Join(st.args, " "), err, tailLines(string(output), 30))}
		}
		m := measurement{
			seconds: elapsed, requests: s.proxy.Requests(), rssKiB: peakRSS(s.rssLog),
			peakWatches: s.proxy.PeakWatches(), apiCPU: processCPU(s.apiPID) - cpuBefore,
		}
		for _, count := range s.proxy.WatchPaths() {
			m.watches += count
		}
		if st.op == opApply && s.t.provider != "" {
			if m.operators, err = readOperatorTimes(ctx, s.c.Kubeconfig, s.namespace); err != nil {
				logf("reading the operators' times: %v", err)
			}
		}
		s.samples[st.op] = append(s.samples[st.op], m)
		logf("%-22s n=%-3d run %d  %-26s %7.2f s  %5d requests  %3d watches  %4d MiB  API CPU %5.1f s %s",
			s.t.name, s.n, r+1, st.op, m.seconds, m.requests, m.watches, m.rssKiB/1024, m.apiCPU, m.operators.summary())
		if s.t.key == "training" && r == 0 && st.dump != "" {
			if err := dumpManifests(ctx, s.c.Kubeconfig, s.namespace, filepath.Join(s.manifests, st.dump)); err != nil {
				return err
			}
		}
		if (s.t.key == "training" || s.t.key == "queued") && r == 0 && s.n == profileAt && (st.op == opPlanCreate || st.op == opPlan || st.op == opPlanNoRefresh) {
			// The same command again, untimed, with every provider process profiled.
			profileDir := filepath.Join(s.dir, "profile-"+logName)
			again := exec.CommandContext(ctx, st.cli, append(args, "-no-color")...)
			again.Dir, again.Env = s.dir, append(slices.Clone(s.env), "TF_PROVIDER_TRAINING_PROFILE="+profileDir)
			if err := os.MkdirAll(profileDir, 0o755); err != nil {
				return err
			}
			if out, err := again.CombinedOutput(); err != nil {
				return fmt.Errorf("profiling terraform %s: %w\n%s", strings.Join(st.args, " "), err, tailLines(string(out), 30))
			}
			summary, err := summarizeCPU(profileDir)
			if err != nil {
				return err
			}
			s.cpu[st.op] = summary
		}
	}
	return nil
}

// results are each operation's median, fastest and slowest of the runs taken.
func (s *toolSession) results() map[string]result {
	results := map[string]result{}
	for op, ms := range s.samples {
		sort.Slice(ms, func(i, j int) bool { return ms[i].seconds < ms[j].seconds })
		res := result{median: ms[len(ms)/2], min: ms[0], max: ms[len(ms)-1], runs: len(ms)}
		if c, ok := s.cpu[op]; ok {
			res.cpu = &c
		}
		results[op] = res
	}
	return results
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
