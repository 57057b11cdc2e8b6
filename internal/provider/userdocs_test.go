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
