package provider

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxSourceLines is the house's bound on a Go source file of the provider: past it a file holds
// more than one idea.
const maxSourceLines = 400

// No Go source file of the repository (tests aside; the local cluster's and the bench's
// included) is longer than maxSourceLines.
func TestNoSourceFileIsLongerThanTheHouseBound(t *testing.T) {
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../.." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir // the cluster's and tools' builds, git
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(data, []byte("\n")); n > maxSourceLines {
			t.Errorf("%s has %d lines, more than %d: split it by what it does", filepath.Clean(path), n, maxSourceLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
