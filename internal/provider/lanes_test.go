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

// The lanes that run tests by name (GNUmakefile's CLI_LANE and COMPAT_LANE) name only acceptance
// tests of this package, so a renamed test is not left out of them by accident, nor a removed one
// kept in the list. (What the CLI lanes must ask, they check as they run: cli_lane_test.go.)
func TestLanesNameOnlyTestsThatExist(t *testing.T) {
	makefile, err := os.ReadFile("../../GNUmakefile")
	if err != nil {
		t.Fatal(err)
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
	for _, lane := range []string{"CLI_LANE", "COMPAT_LANE"} {
		m := regexp.MustCompile(`(?m)^` + lane + ` = \^\(([^)]*)\)\$\$$`).FindSubmatch(makefile)
		if m == nil {
			t.Fatalf("GNUmakefile has no %s = ^(A|B|...)$$", lane)
		}
		for _, name := range strings.Split(string(m[1]), "|") {
			if !strings.HasPrefix(name, "TestAcc") || !tests[name] {
				t.Errorf("%s names %q, which is no acceptance test of this package", lane, name)
			}
		}
	}
}
