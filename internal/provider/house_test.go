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

// No Go source file of the provider (internal/, tests aside) is longer than maxSourceLines.
func TestNoSourceFileIsLongerThanTheHouseBound(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
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
