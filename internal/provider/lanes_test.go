package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The CLI lanes (GNUmakefile's CLI_LANE) run tests by name: each name is an acceptance test of
// this package, so a renamed test is not left out of them by accident, nor a removed one kept
// in the list. (What the list must ask, the lanes check as they run: cli_lane_test.go.)
func TestCLILanesNameOnlyTestsThatExist(t *testing.T) {
	makefile, err := os.ReadFile("../../GNUmakefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CLI_LANE = \^\(([^)]*)\)\$\$$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("GNUmakefile has no CLI_LANE = ^(A|B|...)$$")
	}
	tests := map[string]bool{}
	files, _ := filepath.Glob("*_test.go")
	fset := token.NewFileSet()
	for _, f := range files {
		parsed, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range parsed.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				tests[fn.Name.Name] = true
			}
		}
	}
	for _, name := range strings.Split(string(m[1]), "|") {
		if !strings.HasPrefix(name, "TestAcc") || !tests[name] {
			t.Errorf("CLI_LANE names %q, which is no acceptance test of this package", name)
		}
	}
}
