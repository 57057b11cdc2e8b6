package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster"
)

// The schema-shapes experiment (make bench-shapes): what Terraform's own cost of planning N
// jobs owes to the shape of this provider's schemas. For each size, the training jobs are
// applied once with this provider; then their state is planned (with refresh) with
// bench/schemafloor, a provider doing nothing, serving the job schemas in each shape its -shapes
// lists (the same content with the provider-set attributes in one object, without them, blocks
// as nested attributes, lists of strings as sets), which reads the stored state into that shape.
// The runs go round the shapes, so that the machine's drift falls on all alike.

// schemaShape is one shape bench/schemafloor serves.
type schemaShape struct{ name, description string }

// schemaShapes asks the schema floor binary which shapes it serves.
func schemaShapes(work string) ([]schemaShape, error) {
	out, err := exec.Command(filepath.Join(work, "schemafloor", "terraform-provider-training"), "-shapes").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the schema shapes: %w", err)
	}
	var shapes []schemaShape
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, description, _ := strings.Cut(line, "\t")
		shapes = append(shapes, schemaShape{name, description})
	}
	return shapes, nil
}

// shapeConfig is the training configuration of n jobs for a shape: with blocks as nested
// attributes, an elastic block is written as an attribute.
func shapeConfig(shape string, n int) string {
	config := trainingConfig(n)
	if shape == "nested-attributes" {
		config = strings.ReplaceAll(config, "  elastic = {\n    min_workers = 1\n    max_workers = 4\n  }",
			"  elastic = [{\n    min_workers = 1\n    max_workers = 4\n  }]")
	}
	return config
}

// measureShapes applies n training jobs and plans their state runs times in every shape.
func measureShapes(ctx context.Context, c *cluster.Cluster, shapes []schemaShape, n, runs int, work, kubeconfig string) (map[string][]float64, error) {
	dir := filepath.Join(work, fmt.Sprintf("shapes-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, c.Kubeconfig, "bench-training"); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "KUBECONFIG="+kubeconfig, "KUBE_CONFIG_PATH="+kubeconfig,
		"BENCH_RSS_LOG="+filepath.Join(dir, "rss.log"), "BENCH_REAL_TRAINING="+filepath.Join(work, "real", "training"))
	terraform := func(in string, extraEnv []string, args ...string) error {
		cmd := exec.CommandContext(ctx, "terraform", append(args, "-input=false", "-no-color", "-var", "workers=1")...)
		cmd.Dir, cmd.Env = in, append(append([]string(nil), env...), extraEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("terraform %s in %s: %w\n%s", strings.Join(args, " "), in, err, tailLines(string(out), 30))
		}
		return nil
	}
	thisProvider := []string{"TF_CLI_CONFIG_FILE=" + filepath.Join(work, cliConfigFile)}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(trainingConfig(n)), 0o644); err != nil {
		return nil, err
	}
	logf("schema shapes, %d jobs: applying them with this provider", n)
	if err := terraform(dir, thisProvider, "apply", "-auto-approve"); err != nil {
		return nil, err
	}
	defer func() {
		if err := terraform(dir, thisProvider, "destroy", "-auto-approve"); err != nil {
			logf("destroying the schema shapes' jobs: %v", err)
		}
	}()
	state, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		return nil, err
	}
	for _, s := range shapes {
		in := filepath.Join(dir, s.name)
		if err := os.MkdirAll(in, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(in, "main.tf"), []byte(shapeConfig(s.name, n)), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(in, "terraform.tfstate"), state, 0o644); err != nil {
			return nil, err
		}
	}
	seconds := map[string][]float64{}
	for r := range runs {
		for _, s := range shapes {
			start := time.Now()
			err := terraform(filepath.Join(dir, s.name), []string{"TF_CLI_CONFIG_FILE=" + filepath.Join(work, schemaFloorCLIConfigFile), "BENCH_SCHEMA_SHAPE=" + s.name},
				"plan", "-detailed-exitcode")
			if err != nil {
				return nil, fmt.Errorf("the plan in shape %s (it must plan no change): %w", s.name, err)
			}
			seconds[s.name] = append(seconds[s.name], time.Since(start).Seconds())
			logf("schema shape %-18s n=%-4d run %d  %6.2f s", s.name, n, r+1, seconds[s.name][r])
		}
	}
	return seconds, nil
}

// renderShapes is RESULTS-shapes.md: each shape's plan time at each size, against the schema as
// it is.
func renderShapes(shapes []schemaShape, results map[int]map[string][]float64, sizes []int, runs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# What Terraform's plan owes to the shape of this provider's schemas\n\n")
	fmt.Fprintf(&b, "Produced by `make bench-shapes` on %s, in one run on one local cluster (2 cores). For each size, the bench's training jobs "+
		"(a quarter of each kind, as in RESULTS.md) are applied once with this provider; their state is then planned (`terraform plan`, "+
		"with refresh, no change) by bench/schemafloor, a provider that does nothing (no validation, no request, Terraform's proposal as "+
		"the plan, the state as stored), serving the four job schemas in each shape below and reading the stored state into it: the time "+
		"is Terraform's own for N resources of that shape. %d runs of each shape, taken in turn; each cell is the median, "+
		"the fastest and slowest in brackets, and the ratio to the schemas as they are.\n\n", time.Now().Format("2006-01-02"), runs)
	for _, s := range shapes {
		fmt.Fprintf(&b, "- **%s**: %s\n", s.name, s.description)
	}
	b.WriteString("\n| shape |")
	for _, n := range sizes {
		fmt.Fprintf(&b, " %d jobs |", n)
	}
	b.WriteString("\n|---|")
	for range sizes {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, s := range shapes {
		fmt.Fprintf(&b, "| %s |", s.name)
		for _, n := range sizes {
			med, lo, hi := spread(results[n][s.name])
			base, _, _ := spread(results[n][shapes[0].name])
			fmt.Fprintf(&b, " %.2f s (%.2f-%.2f), %.2fx |", med, lo, hi, med/base)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// spread is the median, smallest and largest of xs.
func spread(xs []float64) (med, lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0, 0, 0
	}
	return s[len(s)/2], s[0], s[len(s)-1]
}
