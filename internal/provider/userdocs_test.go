package provider

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// userDocs are what a platform team reads: the README, the generated docs and what they are made
// from (the templates, the examples and the schema's descriptions, which docs/ holds).
var userDocs = []string{"../../README.md", "../../docs", "../../templates", "../../examples"}

// notForUsers are words that belong to this repository's tests and history, not to a user's
// cluster: test names, the test cluster and its seed scenario, commit hashes.
var notForUsers = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a test name", regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9]*(_[A-Za-z0-9]+)?\b`)},
	{"the seed", regexp.MustCompile(`(?i)\bseed\b`)},
	{"the local cluster", regexp.MustCompile(`(?i)\blocal cluster\b`)},
	{"the test cluster's taints", regexp.MustCompile(`\b(gpu_node|ssd_node)\b`)},
	{"a commit hash", regexp.MustCompile(`\b(at|commit) [0-9a-f]{7,40}\b`)},
	{"the test machine's node", regexp.MustCompile(`(?i)\breal (node|kubelet)\b`)},
	{"the tests", regexp.MustCompile(`(?i)\b(acceptance (suite|tests?)|test suite)\b`)},
	{"the shortcuts' switch", regexp.MustCompile(`TRAINING_SHORTCUTS`)},
}

// What users read speaks of their cluster: no test name, no seed, no local cluster, no commit.
// The README's contributor pointers name CONTRIBUTING.md instead.
func TestUserDocsSpeakOfTheUsersCluster(t *testing.T) {
	for _, root := range userDocs {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(p); ext != ".md" && ext != ".tmpl" && ext != ".tf" && ext != ".sh" {
				return nil
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(raw), "\n") {
				for _, w := range notForUsers {
					if m := w.re.FindString(line); m != "" {
						t.Errorf("%s:%d names %s (%q): user docs speak of the user's cluster", p, i+1, w.what, m)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// README installs the latest release the CHANGELOG names: it checks out that tag and pins a
// constraint that selects it.
func TestREADMEInstallsTheLatestRelease(t *testing.T) {
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## ([0-9]+)\.([0-9]+)\.([0-9]+) \(`).FindStringSubmatch(string(changelog))
	if m == nil {
		t.Fatal("CHANGELOG.md names no release (## X.Y.Z (date))")
	}
	latest := m[1] + "." + m[2] + "." + m[3]
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The release's own make release takes its version from VERSION (the tag's from 0.2.0 on).
	if want := "git checkout v" + latest + "\nmake release VERSION=" + latest + " "; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not build the latest release: no %q", want)
	}
	pin := regexp.MustCompile(`source\s*=\s*"kubetrain/training"\s*\n\s*version\s*=\s*"([^"]*)"`).FindStringSubmatch(readmeBlock(t, "required_providers"))
	if pin == nil || pin[1] != "~> "+latest {
		t.Errorf("README.md's provider block pins %v; want ~> %s, the latest release", pin, latest)
	}
}

// A job resource's page says what Arena's flags are here once, in its "Coming from Arena"
// table, and every attribute that table names is one of the page's: the attributes' own
// descriptions speak of Kubernetes and the operators, not of another tool's flags.
func TestArenaFlagsAreInOneTablePerPage(t *testing.T) {
	pages, err := filepath.Glob("../../docs/resources/*.md")
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(raw)
		section := ""
		if start := strings.Index(doc, "\n## Coming from Arena\n"); start >= 0 {
			section = doc[start+1:]
			if end := strings.Index(section[3:], "\n## "); end >= 0 {
				section = section[:end+3]
			}
			tables++
		}
		rest := strings.Replace(doc, section, "", 1)
		if m := regexp.MustCompile("\\(Arena: [^)]*\\)|Arena's `--[a-z-]+`").FindString(rest); m != "" {
			t.Errorf("%s names Arena's %q outside its Coming from Arena table", page, m)
		}
		for _, row := range regexp.MustCompile(`(?m)^\| .* \| (.*) \|$`).FindAllStringSubmatch(section, -1) {
			ours, _, _ := strings.Cut(row[1], "data source") // what follows is the data source's
			for _, code := range regexp.MustCompile("`([a-z_]+)(\\s*=[^`]*|\\[[^`]*)?`").FindAllStringSubmatch(ours, -1) {
				if attr := code[1]; !strings.HasPrefix(attr, "training_") && !strings.Contains(doc, "- `"+attr+"` (") {
					t.Errorf("%s's Coming from Arena table names %q, which is not an attribute of the resource", page, attr)
				}
			}
		}
	}
	if tables < 4 {
		t.Errorf("%d resource pages have a Coming from Arena table; want the MPI, TF, PyTorch and elastic jobs'", tables)
	}
}
