package jobs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The releases the provider names as tested are the ones the local cluster builds: each part's
// component requires its module at Current, and its previous generation at Previous.
func TestTestedReleasesAreWhatTheLocalClusterBuilds(t *testing.T) {
	cluster := filepath.Join("..", "..", "cluster")
	for _, part := range TestedParts {
		t.Run(part.Component, func(t *testing.T) {
			if got := requiredVersion(t, filepath.Join(cluster, "components", part.Component, "go.mod"), part.Module); got != part.Current {
				t.Errorf("the local cluster builds %s %s; its Current in requirements.go says %s (update it, and the docs' Requirements tables)",
					part.Module, got, part.Current)
			}
			previous := filepath.Join(cluster, "generations", "previous", part.Component, "go.mod")
			if part.Previous == "" {
				if _, err := os.Stat(previous); err == nil {
					t.Errorf("%s has a previous generation (%s) but no Previous release", part.Component, previous)
				}
				return
			}
			if got := requiredVersion(t, previous, part.Module); got != part.Previous {
				t.Errorf("the previous generation builds %s %s; its Previous says %s (update it, and the docs' Requirements tables)",
					part.Module, got, part.Previous)
			}
		})
	}
}

func requiredVersion(t *testing.T, gomod, module string) string {
	t.Helper()
	data, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == module {
			return r.Mod.Version
		}
	}
	t.Fatalf("%s does not require %s", gomod, module)
	return ""
}

// The Requirements tables of README.md and the provider's docs name, on each part's row (or its
// "tested with" line), the releases tested and no others.
func TestRequirementsTablesNameTheReleasesTested(t *testing.T) {
	// The words a row names a part by (a row may name two: Trainer with JobSet).
	names := map[string]Tested{
		"Kubernetes": TestedKubernetes, "mpi-operator": TestedMPIOperator, "training-operator": TestedTrainingOperator,
		"Trainer": TestedTrainer, "JobSet": TestedJobSet, "FrameworkController": TestedFrameworkController, "Kueue": TestedKueue,
	}
	version := regexp.MustCompile(`\bv?\d+\.\d+(\.\d+)?\b`)
	for _, doc := range []string{"README.md", filepath.Join("templates", "index.md.tmpl")} {
		data, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		section := requirementsSection(string(data))
		if section == "" {
			t.Fatalf("%s has no Requirements section", doc)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(section, "\n") {
			if !strings.HasPrefix(line, "|") && !strings.Contains(line, "tested with") {
				continue
			}
			var want []string
			for name, part := range names {
				if !regexp.MustCompile(`\b` + name + `\b`).MatchString(line) {
					continue
				}
				seen[name] = true
				for _, r := range []string{part.Current, part.Previous} {
					if r == "" {
						continue
					}
					if part == TestedKubernetes {
						r = Minor(r)
					}
					want = append(want, r)
				}
			}
			if want == nil {
				continue
			}
			got := version.FindAllString(line, -1)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(slices.Compact(got), slices.Compact(want)) {
				t.Errorf("%s's Requirements line names %v, the releases tested are %v:\n%s", doc, slices.Compact(got), want, line)
			}
		}
		for name := range names {
			if !seen[name] {
				t.Errorf("%s's Requirements section has no row for %s", doc, name)
			}
		}
	}
}

// requirementsSection is the text under a "## Requirements" heading, up to the next heading of
// that level.
func requirementsSection(doc string) string {
	_, after, ok := strings.Cut(doc, "\n## Requirements\n")
	if !ok {
		return ""
	}
	section, _, _ := strings.Cut(after, "\n## ")
	return section
}
