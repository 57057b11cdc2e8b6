package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// A cpuSummary is where the CPU time of every provider process of one command went: by the
// plugin protocol call it served (its tf6server handler on the stack) and by whose code ran
// (the innermost frame outside the Go runtime: an allocation or a write barrier counts for the
// code that allocated or wrote).
type cpuSummary struct {
	total    float64            // seconds
	byRPC    map[string]float64 // seconds
	byOwner  map[string]float64 // seconds
	profiles int
}

// The owners of the code a sample ran, by the innermost frame's package.
const (
	ownerProvider  = "this provider"
	ownerFramework = "plugin framework and protocol (terraform-plugin-framework, -go)"
	ownerKube      = "Kubernetes client (client-go, apimachinery, API types)"
	ownerRuntime   = "Go runtime alone (background garbage collection, scheduling)"
	ownerOther     = "other (gRPC, protobuf, standard library)"
)

// summarizeCPU reads the CPU profiles (cpu-*.pprof) that TF_PROVIDER_TRAINING_PROFILE made
// each provider process write in dir.
func summarizeCPU(dir string) (cpuSummary, error) {
	s := cpuSummary{byRPC: map[string]float64{}, byOwner: map[string]float64{}}
	files, err := filepath.Glob(filepath.Join(dir, "cpu-*.pprof"))
	if err != nil {
		return s, err
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return s, err
		}
		p, err := profile.Parse(f)
		_ = f.Close()
		if err != nil {
			return s, fmt.Errorf("%s: %w", file, err)
		}
		s.profiles++
		index := len(p.SampleType) - 1 // cpu, nanoseconds
		for _, sample := range p.Sample {
			seconds := float64(sample.Value[index]) / 1e9
			s.total += seconds
			s.byRPC[rpcOf(sample)] += seconds
			s.byOwner[ownerOf(sample)] += seconds
		}
	}
	return s, nil
}

// rpcOf is the plugin protocol call a sample served: the method of tf6server's server on its
// stack, or what else the process was doing.
func rpcOf(sample *profile.Sample) string {
	for _, loc := range sample.Location {
		for _, line := range loc.Line {
			name := line.Function.Name
			// The server's exported methods are the calls; its own helpers (loggingContext) are not.
			if i := strings.Index(name, "tf6server.(*server)."); i >= 0 && isUpper(name[i+len("tf6server.(*server)."):]) {
				return name[i+len("tf6server.(*server)."):]
			}
		}
	}
	return "outside any call (start-up, garbage collection in the background, gRPC)"
}

// ownerOf is whose code a sample ran: the innermost frame's outside the Go runtime, or the
// runtime's when the whole stack is (a background mark worker).
func ownerOf(sample *profile.Sample) string {
	for _, loc := range sample.Location { // innermost first, and within one its inlined frames
		for _, line := range loc.Line {
			if name := line.Function.Name; !isRuntime(name) {
				return ownerOfFunction(name)
			}
		}
	}
	return ownerRuntime
}

func isRuntime(name string) bool {
	for _, prefix := range []string{"runtime.", "internal/runtime/", "gcWriteBarrier", "aeshash", "memeqbody", "indexbytebody", "sync/atomic.", "internal/sync."} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

func ownerOfFunction(name string) string {
	switch {
	case strings.HasPrefix(name, "github.com/kubetrain/terraform-provider-training/"):
		return ownerProvider
	case strings.HasPrefix(name, "github.com/hashicorp/terraform-plugin-"):
		return ownerFramework
	case strings.HasPrefix(name, "k8s.io/"), strings.HasPrefix(name, "sigs.k8s.io/"):
		return ownerKube
	}
	return ownerOther
}

// render is the summary as two tables' rows, largest first.
func (s cpuSummary) render(what string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %.2f s of CPU in %d provider processes.\n\n| by the call it served | CPU | share |\n|---|---|---|\n", what, s.total, s.profiles)
	for _, row := range sorted(s.byRPC) {
		fmt.Fprintf(&b, "| %s | %.2f s | %.0f%% |\n", row.key, row.value, 100*row.value/s.total)
	}
	fmt.Fprintf(&b, "\n| by whose code ran | CPU | share |\n|---|---|---|\n")
	for _, row := range sorted(s.byOwner) {
		fmt.Fprintf(&b, "| %s | %.2f s | %.0f%% |\n", row.key, row.value, 100*row.value/s.total)
	}
	return b.String()
}

type row struct {
	key   string
	value float64
}

func sorted(m map[string]float64) []row {
	var rows []row
	for k, v := range m {
		rows = append(rows, row{k, v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].value > rows[j].value })
	return rows
}

func isUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }
