package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

func renderReport(results map[string]map[int]map[string]result, failures map[string]string, ns []int, cfg benchConfig, nodes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks: this provider beside kubernetes_manifest, kubectl_manifest and Terraform's floor\n\n")
	target, extra := cfg.target, ""
	if cfg.only != "" {
		extra += " -tools " + cfg.only
	}
	if cfg.mpiQueue != 0 {
		target = "bench-mpi-queue"
		extra += fmt.Sprintf(" -mpi-queue-rate-limit %d", cfg.mpiQueue)
	}
	if cfg.apiQPS != 0 {
		target = "bench-gc"
		extra += fmt.Sprintf(" -controller-manager-api-qps %d", cfg.apiQPS)
	}
	fmt.Fprintf(&b, "Produced by `make %s` (`cd bench && go run . -n %s -runs %d -one-run-above %d -slow-max %d -slow-runs %d -peers-max %d -crowded-max %d -unrelated-pods %d%s`) on %s, of this provider at %s, in one run on one local "+
		"cluster with the real operators (mpi-operator, training-operator, FrameworkController) and KWOK's simulated kubelets on %d nodes, "+
		"on this machine (2 cores). Each size holds a quarter of each kind: elastic Horovod MPIJobs, TFJobs, elastic PyTorchJobs and "+
		"elastic PyTorch Frameworks with their own etcd. Every tool waits for the same thing: each job running on apply and rescale, "+
		"each object gone on destroy.\n\n", target, joinInts(ns), cfg.runs, cfg.oneRunAbove, cfg.slowMax, cfg.slowRuns, cfg.peersMax, cfg.crowdedMax, cfg.unrelatedPods, extra, time.Now().UTC().Format("2006-01-02"), cfg.commit, nodes)
	if cfg.mpiQueue != 0 {
		fmt.Fprintf(&b, "**Not upstream's defaults:** mpi-operator runs with `--controller-queue-rate-limit=%[1]d --controller-queue-burst=%[1]d` "+
			"(upstream: 10 and 100), so that its work queue's rate limiter, through which every event about an MPIJob passes, does not "+
			"hold the MPIJobs (`-mpi-queue-rate-limit %[1]d`).\n\n", cfg.mpiQueue)
	}
	if cfg.apiQPS != 0 {
		fmt.Fprintf(&b, "**Not upstream's defaults:** kube-controller-manager runs with `--kube-api-qps=%d --kube-api-burst=%d` "+
			"(upstream: 20 and 30), so that the garbage collector, which deletes what each job owned (pods, Services, ConfigMaps, "+
			"launcher Jobs, and with foreground deletion the job itself), is not held by its client's rate limit "+
			"(`-controller-manager-api-qps %[1]d`).\n\n", cfg.apiQPS, 2*cfg.apiQPS)
	}
	fmt.Fprintf(&b, "Each cell: the median wall time of the whole `terraform` command (default parallelism 10) over the runs, with the fastest "+
		"and slowest in brackets (%d runs; above %d jobs, 1 run); API requests per job and WATCH requests (watch connections opened; the most open at once in brackets), "+
		"counted by a proxy in front of the API server; the peak resident memory of any one provider process (Terraform starts several "+
		"per command); the API server's CPU time during the command. At each size the tools take their runs in turn (run 1 of "+
		"each, then run 2 of each), so that the tools' figures come from the same minutes. kubernetes_manifest runs at most %d jobs, %d run%s above 10 "+
		"(it takes minutes per operation).\n\n", cfg.runs, cfg.oneRunAbove, cfg.slowMax, cfg.slowRuns, plural(cfg.slowRuns))
	fmt.Fprintf(&b, "![Time per operation against the number of jobs](%s)\n\n", filepath.Base(cfg.plot))
	fmt.Fprintf(&b, "What each tool does, as configured here (bench/configs.go):\n\n"+
		"- **training** (`training_mpi_job`, `training_tf_job`, `training_pytorch_job`, `training_elastic_job`), default `wait_for = \"running\"`: "+
		"apply creates each job (an elastic job's two Services and NetworkPolicy first) and waits until its operator reports it running "+
		"and each role has exactly its pods Running, watching through one informer per kind and namespace that every job of the "+
		"process shares; a refresh reads each job and its pods and compares every attribute the provider sets, so any change made "+
		"outside Terraform shows in the plan: the first read of a kind in a namespace is a GET (its pods a LIST by selector), the "+
		"next ones are answered by one consistent LIST of the kind (and of the pods) in the namespace that the process's reads share; "+
		"the rescale patches the worker count in place and waits as apply does; destroy deletes each job with background propagation "+
		"(and the elastic job's Services and NetworkPolicy) and waits until the job, every pod and everything its operator made for it "+
		"(Services, ConfigMaps, launcher Jobs; not mpi-operator's SSH Secret) are gone, watched by owner UID through the same shared "+
		"informers (metadata only).\n"+
		"- **training beside unrelated pods**: the same jobs and commands in a namespace that also holds %d pods of no job "+
		"(another team's, Pending under a scheduler this cluster does not run, so that nothing works on them), made before the first run of any tool at its size, so "+
		"that the tools there run beside them in the cluster and only this one in its namespace; its last ratio is its median against "+
		"the median of the same operation without them.\n"+
		"- **kubectl_manifest**, one resource per object, the manifests being the objects this provider made (read back from the "+
		"cluster after its first apply and rescale, without status, UIDs and allocated IPs): `wait_for` the Running condition and, for "+
		"the MPIJobs and PyTorchJobs, `status.replicaStatuses.Worker.active` equal to the worker count (a Framework: `status.state = "+
		"AttemptRunning`, which says nothing of the number of workers) on apply and rescale, one WATCH per job; `wait = true`, so destroy deletes with "+
		"foreground propagation and waits until the object is gone (not its pods); a refresh reads the object and compares the fields "+
		"of `yaml_body`.\n"+
		"- **kubernetes_manifest**, the same manifests: `wait` for the same condition or field on apply and rescale (by polling); "+
		"server-side apply; destroy waits until the object is gone.\n"+
		"- **terraform_data**: no provider and no API call; Terraform's own cost for N resources holding the jobs' settings.\n"+
		"- **a plugin doing nothing**: terraform_data's configuration, the same settings in one attribute, `input`, of a resource "+
		"type served by bench/schemafloor/plugin, a provider that does nothing (no validation, no request, the plan Terraform "+
		"proposes, the state as stored) and holds nothing but the plugin framework: what serving N resources from a plugin process "+
		"costs Terraform before any schema or provider work, the least any provider can take for them.\n"+
		"- **plan, this schema, a provider doing nothing**: the training jobs' plan (with refresh) run with bench/schemafloor in place "+
		"of this provider: it serves the same schema and does nothing else (no validation, no request, the plan Terraform proposes, the "+
		"state as stored), so its time is Terraform's own for N resources of this schema, the least any provider of it can take; "+
		"its last ratio is against terraform_data's plan.\n"+
		"- **training, queued in Kueue**: this provider's jobs in a namespace of their own, the MPI, TF and PyTorch jobs (three "+
		"quarters) with `queue_name`, a LocalQueue of a ClusterQueue whose quota holds them all (the Frameworks, which Kueue does not run, "+
		"unqueued); its apply waits until Kueue has admitted them and they run; its jobs are not rescaled (a queued job's new worker count "+
		"is a replacement, as Kueue requeues it).\n"+
		"- **plan of the jobs to create** (this provider, queued or not): `terraform plan` before the apply, every job new: each job's "+
		"plan checks (placement, Pod Security; a queued job's admission predicted from Kueue's queues and workloads).\n"+
		"- **plan without refresh** (every tool): `terraform plan -refresh=false`, no API request: what Terraform and the provider "+
		"process cost for N resources of that schema, apart from reading the cluster; the plan with refresh less this is the refresh.\n"+
		"- **query** (this provider only, run by Terraform %s): `terraform query` of the four job list resources with "+
		"`include_resource`, which find every job of the namespace with one LIST per kind and read each back in the provider's words, as a "+
		"migration does; the peers have no list resource.\n\n", cfg.unrelatedPods, queryVersion())
	for _, t := range tools {
		if why := failures[t.name]; why != "" {
			fmt.Fprintf(&b, "**%s could not manage these jobs**, so it is not measured: %s\n\n", t.name, why)
		}
	}
	peers := []string{"kubernetes_manifest", "kubectl_manifest", floorTool}
	for _, n := range ns {
		fmt.Fprintf(&b, "\n## %d jobs\n\n| operation |", n)
		for _, t := range tools {
			fmt.Fprintf(&b, " %s |", t.name)
		}
		fmt.Fprintf(&b, " this / kubernetes_manifest | this / kubectl_manifest | this / floor | unrelated pods: with / without |\n|---|")
		for range tools {
			fmt.Fprintf(&b, "---|")
		}
		fmt.Fprintf(&b, "---|---|---|---|\n")
		for _, op := range operations {
			fmt.Fprintf(&b, "| %s |", op)
			for _, t := range tools {
				r, ok := results[t.name][n][op]
				if !ok {
					fmt.Fprintf(&b, " - |")
					continue
				}
				m := r.median
				cell := fmt.Sprintf("%.2f s", m.seconds)
				if r.runs > 1 {
					cell += fmt.Sprintf(" (%.2f-%.2f)", r.min.seconds, r.max.seconds)
				}
				switch {
				case op == opPlanSchemaFloor:
					cell += fmt.Sprintf("<br>%d requests", m.requests)
				case t.provider != "":
					cell += fmt.Sprintf("<br>%.1f req/job, %d watches (%d open)<br>%d MiB, API CPU %.1f s",
						float64(m.requests)/float64(n), m.watches, m.peakWatches, m.rssKiB/1024, m.apiCPU)
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
			mine, ok := results[trainingTool][n][op]
			for _, peer := range peers {
				peerOp := op
				if op == opPlanSchemaFloor {
					// Terraform's cost for this schema beside its cost for terraform_data's.
					if peer != floorTool {
						fmt.Fprintf(&b, " - |")
						continue
					}
					peerOp = opPlan
				}
				other, ok2 := results[peer][n][peerOp]
				if !ok || !ok2 || other.median.seconds == 0 {
					fmt.Fprintf(&b, " - |")
					continue
				}
				fmt.Fprintf(&b, " %.2f |", mine.median.seconds/other.median.seconds)
			}
			if crowded, ok2 := results[crowdedTool][n][op]; ok && ok2 && mine.median.seconds > 0 {
				fmt.Fprintf(&b, " %.2f |", crowded.median.seconds/mine.median.seconds)
			} else {
				fmt.Fprintf(&b, " - |")
			}
			fmt.Fprintf(&b, "\n")
		}
		var operators []string
		for _, t := range tools {
			if r, ok := results[t.name][n][opApply]; ok && len(r.median.operators) > 0 {
				operators = append(operators, fmt.Sprintf("%s: %s", t.name, r.median.operators.summary()))
			}
		}
		if len(operators) > 0 {
			fmt.Fprintf(&b, "\nThe operators' time from each job's creation to reporting it running (the Kubeflow kinds' Running condition, "+
				"a Framework's `status.runTime`; whole seconds), median / slowest per kind, in the median apply: %s.\n", strings.Join(operators, "; "))
		}
		var queued []string
		for _, op := range []string{opPlanCreate, opPlan, opPlanNoRefresh} {
			q, ok := results[queuedTool][n][op]
			u, ok2 := results[trainingTool][n][op]
			if ok && ok2 && u.median.seconds > 0 {
				queued = append(queued, fmt.Sprintf("%s %.2f s against %.2f s unqueued (%.2fx)", op, q.median.seconds, u.median.seconds, q.median.seconds/u.median.seconds))
			}
		}
		if len(queued) > 0 {
			fmt.Fprintf(&b, "\nQueued in Kueue (medians): %s.\n", strings.Join(queued, "; "))
		}
		plan, ok := results[trainingTool][n][opPlan]
		schema, ok2 := results[trainingTool][n][opPlanSchemaFloor]
		floor, ok3 := results[floorTool][n][opPlan]
		if ok && ok2 && ok3 && schema.median.seconds > 0 && floor.median.seconds > 0 {
			fmt.Fprintf(&b, "\nOf this provider's plan (%.2f s), Terraform with this schema and a provider doing nothing takes %.2f s, "+
				"%.1fx terraform_data's plan: the rest, %.2f s, is this provider's own work (the plugin framework's plan of each resource "+
				"and the refresh).", plan.median.seconds, schema.median.seconds, schema.median.seconds/floor.median.seconds,
				plan.median.seconds-schema.median.seconds)
			if plugin, ok := results[pluginFloorTool][n][opPlan]; ok {
				fmt.Fprintf(&b, " A provider doing nothing with terraform_data's one attribute takes %.2f s, %.2fx terraform_data's plan: "+
					"that much is the plugin protocol's alone, the rest of the schema floor (%.2f s) is this schema's.",
					plugin.median.seconds, plugin.median.seconds/floor.median.seconds, schema.median.seconds-plugin.median.seconds)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString(perJob(results, ns))
	b.WriteString(profiles(results))
	return b.String()
}

// perJob compares this provider's cost per job at the largest size with its cost per job at
// 100 jobs (or the smallest size above 10), operation by operation.
func perJob(results map[string]map[int]map[string]result, ns []int) string {
	base, top := 0, 0
	for _, n := range ns {
		if n > 10 && (base == 0 || n == 100) {
			base = n
		}
		top = max(top, n)
	}
	if base == 0 || top <= base {
		return ""
	}
	var rows []string
	for _, op := range operations {
		a, ok := results[trainingTool][base][op]
		z, ok2 := results[trainingTool][top][op]
		if !ok || !ok2 || a.median.seconds == 0 {
			continue
		}
		perA, perZ := a.median.seconds/float64(base), z.median.seconds/float64(top)
		rows = append(rows, fmt.Sprintf("| %s | %.1f ms | %.1f ms | %.2f |", op, 1000*perA, 1000*perZ, perZ/perA))
	}
	return fmt.Sprintf("\n## Cost per job, %d jobs against %d\n\nThis provider's median time divided by the number of jobs.\n\n"+
		"| operation | at %d | at %d | ratio |\n|---|---|---|---|\n%s\n", top, base, base, top, strings.Join(rows, "\n"))
}

// profiles renders where the provider's CPU went in the profiled plans.
func profiles(results map[string]map[int]map[string]result) string {
	var parts []string
	for _, tool := range []string{trainingTool, queuedTool} {
		for _, op := range []string{opPlanCreate, opPlan, opPlanNoRefresh} {
			if r, ok := results[tool][profileAt][op]; ok && r.cpu != nil {
				parts = append(parts, r.cpu.render(fmt.Sprintf("**%s**, %s, %d jobs", op, tool, profileAt)))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("\n## Where this provider's plan goes\n\nEach plan run once more, untimed, with `TF_PROVIDER_TRAINING_PROFILE` "+
		"set: the CPU profiles of every provider process Terraform started, by the plugin protocol call each sample served and by "+
		"whose code it was in (bench/profile.go).\n\n%s", strings.Join(parts, "\n"))
}

// renderPlot draws, for each operation but the query, the median time against the number of
// jobs, one line per tool, on log-log axes: a line's slope is how its cost grows.
func renderPlot(results map[string]map[int]map[string]result, ns []int) string {
	ops := []string{opApply, opPlan, opRescale, opDestroy}
	colors := map[string]string{trainingTool: "#d62728", crowdedTool: "#ff9896", "kubernetes_manifest": "#1f77b4", "kubectl_manifest": "#2ca02c", floorTool: "#7f7f7f", pluginFloorTool: "#8c564b"}
	const panelW, panelH, margin = 360.0, 260.0, 50.0
	// schemaFloorDash draws the schema floor's line, in the plan panel and in the legend.
	const schemaFloorDash = ` stroke-dasharray="4 3"`
	width, height := 2*panelW, 2*panelH+50
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	// The legend, in rows as wide as the plot; after the tools, the plan panel's schema floor:
	// Terraform with this schema and a provider doing nothing.
	type entry struct{ name, color, dash string }
	var legend []entry
	for _, t := range tools {
		legend = append(legend, entry{t.name, colors[t.name], ""})
	}
	legend = append(legend, entry{"this schema, provider doing nothing (plan)", colors[trainingTool], schemaFloorDash})
	x, y := 10.0, 15.0
	for _, e := range legend {
		w := 40 + 7*float64(len(e.name))
		if x > 10 && x+w > width {
			x, y = 10, y+17
		}
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			x, y, x+20, y, e.color, e.dash, x+24, y+4, e.name)
		x += w
	}
	minN, maxN := float64(ns[0]), float64(ns[0])
	for _, n := range ns {
		minN, maxN = math.Min(minN, float64(n)), math.Max(maxN, float64(n))
	}
	if maxN == minN {
		maxN = minN * 10
	}
	for i, op := range ops {
		ox, oy := float64(i%2)*panelW, 50+float64(i/2)*panelH
		type series struct{ tool, op, dash string }
		var lines []series
		for _, t := range tools {
			lines = append(lines, series{t.name, op, ""})
		}
		if op == opPlan {
			lines = append(lines, series{trainingTool, opPlanSchemaFloor, schemaFloorDash})
		}
		minT, maxT := math.Inf(1), 0.0
		for _, l := range lines {
			for _, n := range ns {
				if r, ok := results[l.tool][n][l.op]; ok && r.median.seconds > 0 {
					minT, maxT = math.Min(minT, r.median.seconds), math.Max(maxT, r.median.seconds)
				}
			}
		}
		if maxT == 0 {
			continue
		}
		lo, hi := math.Floor(math.Log10(minT)), math.Ceil(math.Log10(maxT))
		if hi == lo {
			hi++
		}
		px := func(n float64) float64 {
			return ox + margin + (math.Log10(n)-math.Log10(minN))/(math.Log10(maxN)-math.Log10(minN))*(panelW-margin-20)
		}
		py := func(s float64) float64 { return oy + panelH - margin - (math.Log10(s)-lo)/(hi-lo)*(panelH-margin-30) }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", ox+margin, oy+18, op)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", px(minN), py(math.Pow(10, lo)), px(maxN), py(math.Pow(10, lo)))
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", px(minN), py(math.Pow(10, lo)), px(minN), py(math.Pow(10, hi)))
		for e := lo; e <= hi; e++ {
			y := py(math.Pow(10, e))
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#ddd"/><text x="%.0f" y="%.0f" text-anchor="end">%g s</text>`+"\n",
				px(minN), y, px(maxN), y, px(minN)-4, y+4, math.Pow(10, e))
		}
		for _, n := range ns {
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%d</text>`+"\n", px(float64(n)), py(math.Pow(10, lo))+14, n)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">jobs</text>`+"\n", px(math.Sqrt(minN*maxN)), py(math.Pow(10, lo))+28)
		for _, l := range lines {
			var points []string
			for _, n := range ns {
				if r, ok := results[l.tool][n][l.op]; ok && r.median.seconds > 0 {
					points = append(points, fmt.Sprintf("%.1f,%.1f", px(float64(n)), py(r.median.seconds)))
				}
			}
			if len(points) == 0 {
				continue
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(points, " "), colors[l.tool], l.dash)
			for _, p := range points {
				xy := strings.Split(p, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], colors[l.tool])
			}
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ",")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
