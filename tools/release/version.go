package main

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// A release's version comes from git, so that a number names one commit's code:
//
//   - HEAD at a tag vX.Y.Z, with a clean tree: X.Y.Z;
//   - anything else: the next minor version after the last tag, as a prerelease that counts the
//     commits since that tag and names the commit, X.(Y+1).0-dev.N+COMMIT (with ".dirty" after
//     COMMIT when the tree has changes); without any tag, 0.1.0-dev.N+COMMIT with N the commits
//     of the history;
//   - an explicit version, as given, unless a tag of that version points at another commit: the
//     release of other code under a released number would have other hashes than the real one,
//     and every lock file that recorded the real one would refuse it.
//
// Terraform and OpenTofu match a prerelease only by its exact version: a constraint such as
// "~> 0.2" never selects 0.2.0-dev.N+COMMIT.

// tagPattern is a release tag: v and a version without prerelease.
var tagPattern = regexp.MustCompile(`^v([0-9]+)\.([0-9]+)\.([0-9]+)$`)

// git runs git in dir and returns its output without the final newline.
type git func(args ...string) (string, error)

func gitIn(dir string) git {
	return func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(exit.Stderr)))
			}
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
}

// releaseVersion is the version a release of the checkout that g reads is built at; explicit is
// the version asked for ("" to derive it).
func releaseVersion(g git, explicit string) (string, error) {
	head, err := g("rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("the commit cannot be read (not a git checkout?): %w", err)
	}
	if explicit != "" {
		tag := "v" + explicit
		at, err := g("rev-parse", "--verify", "--quiet", tag+"^{commit}")
		if err == nil && at != "" && at != head {
			return "", fmt.Errorf("VERSION %s is the release tagged %s, at commit %s; this checkout is at %s. "+
				"A release of other code under that number would not match the hashes of the real one. "+
				"Check out %s to build it, or leave VERSION unset to build this commit as a prerelease", explicit, tag, short(at), short(head), tag)
		}
		return explicit, nil
	}
	dirty := ""
	if status, err := g("status", "--porcelain", "--untracked-files=no"); err != nil {
		return "", err
	} else if status != "" {
		dirty = ".dirty"
	}
	described, err := g("describe", "--tags", "--long", "--match", "v[0-9]*.[0-9]*.[0-9]*", "--abbrev=12")
	if err != nil {
		// No release tag in the history: the first minor version's prerelease.
		count, err := g("rev-list", "--count", "HEAD")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("0.1.0-dev.%s+%s%s", count, short(head), dirty), nil
	}
	// vX.Y.Z-N-gCOMMIT
	parts := strings.Split(described, "-")
	if len(parts) < 3 {
		return "", fmt.Errorf("git describe printed %q, not TAG-N-gCOMMIT", described)
	}
	tag, count := strings.Join(parts[:len(parts)-2], "-"), parts[len(parts)-2]
	m := tagPattern.FindStringSubmatch(tag)
	if m == nil {
		return "", fmt.Errorf("the last tag %q is not a release tag vX.Y.Z", tag)
	}
	if count == "0" && dirty == "" {
		return strings.TrimPrefix(tag, "v"), nil
	}
	minor, err := strconv.Atoi(m[2])
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s.%d.0-dev.%s+%s%s", m[1], minor+1, count, short(head), dirty), nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
