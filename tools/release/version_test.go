package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A checkout in a temporary folder, with commits and tags made by the real git.
func newRepo(t *testing.T) (git, func(msg string) string) {
	t.Helper()
	dir := t.TempDir()
	g := gitIn(dir)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "release@test"},
		{"config", "user.name", "release test"},
	} {
		if _, err := g(args...); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	commit := func(msg string) string {
		n++
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(strings.Repeat("x", n)), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := g("add", "f"); err != nil {
			t.Fatal(err)
		}
		if _, err := g("commit", "-q", "-m", msg); err != nil {
			t.Fatal(err)
		}
		head, err := g("rev-parse", "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		return head
	}
	return g, commit
}

func mustVersion(t *testing.T, g git, explicit string) string {
	t.Helper()
	v, err := releaseVersion(g, explicit)
	if err != nil {
		t.Fatal(err)
	}
	if !semver.MatchString(v) {
		t.Errorf("%q is not a version the release accepts", v)
	}
	return v
}

func TestReleaseVersion_fromTheTagsOfTheHistory(t *testing.T) {
	g, commit := newRepo(t)
	commit("one")
	second := commit("two")
	if v := mustVersion(t, g, ""); v != "0.1.0-dev.2+"+second[:12] {
		t.Errorf("without a tag: %s; want the first minor version's prerelease counting 2 commits", v)
	}
	if _, err := g("tag", "-a", "v0.1.0", "-m", "0.1.0"); err != nil {
		t.Fatal(err)
	}
	if v := mustVersion(t, g, ""); v != "0.1.0" {
		t.Errorf("at the tag v0.1.0: %s", v)
	}
	commit("three")
	fourth := commit("four")
	if v := mustVersion(t, g, ""); v != "0.2.0-dev.2+"+fourth[:12] {
		t.Errorf("two commits after v0.1.0: %s; want 0.2.0-dev.2+%s", v, fourth[:12])
	}
	if v := mustVersion(t, g, "0.2.0"); v != "0.2.0" {
		t.Errorf("an explicit version no tag names: %s", v)
	}
	_, err := releaseVersion(g, "0.1.0")
	if err == nil || !regexp.MustCompile(`VERSION 0.1.0 is the release tagged v0.1.0, at commit [0-9a-f]{12}; this checkout is at `+fourth[:12]).MatchString(err.Error()) {
		t.Errorf("an explicit version tagged on another commit: %v; want it refused, naming both commits", err)
	}
	if _, err := g("checkout", "-q", "v0.1.0"); err != nil {
		t.Fatal(err)
	}
	if v := mustVersion(t, g, "0.1.0"); v != "0.1.0" {
		t.Errorf("the explicit version of the tag checked out: %s", v)
	}
}

func TestReleaseVersion_aTreeWithChangesIsMarked(t *testing.T) {
	g, commit := newRepo(t)
	head := commit("one")
	if _, err := g("tag", "v1.4.2"); err != nil {
		t.Fatal(err)
	}
	top, err := g("rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "f"), []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := mustVersion(t, g, ""); v != "1.5.0-dev.0+"+head[:12]+".dirty" {
		t.Errorf("a changed tree at the tag v1.4.2: %s; want a prerelease marked dirty, never 1.4.2", v)
	}
}
