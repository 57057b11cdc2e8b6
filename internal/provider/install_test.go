package provider

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
)

// releaseDir is the release `make release` wrote for the install test (TRAINING_RELEASE_DIR); a
// run without one is another lane's, and skips.
func releaseDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TRAINING_RELEASE_DIR")
	if dir == "" {
		t.Skip("TRAINING_RELEASE_DIR is not set: make testacc-install builds a release and runs this test")
	}
	return dir
}

// releaseVersion is the version the release in dir was built at (make release derives it from
// git), read from the name of its SHA256SUMS.
func releaseVersion(t *testing.T, dir string) string {
	t.Helper()
	sums, err := filepath.Glob(filepath.Join(dir, "terraform-provider-training_*_SHA256SUMS"))
	if err != nil || len(sums) != 1 {
		t.Fatalf("the release in %s has %d SHA256SUMS files (%v); want one", dir, len(sums), err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(sums[0]), "terraform-provider-training_"), "_SHA256SUMS")
}

// readmeBlock is the README's first fenced hcl block that contains what.
func readmeBlock(t *testing.T, what string) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```hcl\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		if strings.Contains(m[1], what) {
			return m[1]
		}
	}
	t.Fatalf("README.md has no hcl block with %q", what)
	return ""
}

// pinnedVersion is the version constraint of a required_providers entry for this provider.
var pinnedVersion = regexp.MustCompile(`(source\s*=\s*"kubetrain/training"\s*\n\s*version\s*=\s*)"[^"]*"`)

// installCLIs are the CLIs the install path is run with: Terraform, and OpenTofu, which reads
// its own registry host's mirror.
func installCLIs(t *testing.T) map[string]struct{ path, host string } {
	tofu := os.Getenv("TRAINING_TOFU")
	if tofu == "" {
		t.Fatal("TRAINING_TOFU is not set: make testacc-install names OpenTofu")
	}
	return map[string]struct{ path, host string }{
		"terraform": {terraformCLI(), "registry.terraform.io"},
		"tofu":      {tofu, "registry.opentofu.org"},
	}
}

// cliConfigFromREADME is the README's CLI configuration with its mirror path the release's and,
// for OpenTofu, its registry host, as README says to change them.
func cliConfigFromREADME(t *testing.T, release, host string) string {
	rc := readmeBlock(t, "provider_installation")
	rc = regexp.MustCompile(`path\s*=\s*"[^"]*"`).ReplaceAllString(rc, `path    = "`+filepath.Join(release, "mirror")+`"`)
	return strings.ReplaceAll(rc, "registry.terraform.io/kubetrain/training", host+"/kubetrain/training")
}

func runCLI(t *testing.T, dir, cli, rc string, args ...string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ".cli.rc"), []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(dir, ".cli.rc"), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", filepath.Base(cli), args, dir, err, out)
	}
	return string(out)
}

// The install path as README writes it: in a fresh folder, README's provider block and first job,
// README's CLI configuration serving the release's filesystem mirror; init installs the release
// (the lock file records its version and the hash of its archive for this platform), and the
// first job plans against the cluster. Then with OpenTofu, from the same release. The release is
// of the commit under test: a prerelease, 0.2.0-dev.N+COMMIT, pinned by its exact version as
// README says (at a release tag, that version).
func TestAccInstall_fromTheReleaseAsTheREADMESays(t *testing.T) {
	release := releaseDir(t)
	newAPI(t)
	releaseVersion := releaseVersion(t, release)
	platform := runtime.GOOS + "_" + runtime.GOARCH
	archive := filepath.Join(release, "terraform-provider-training_"+releaseVersion+"_"+platform+".zip")
	h1, err := dirhash.HashZip(archive, dirhash.Hash1)
	if err != nil {
		t.Fatalf("the release has no archive for %s: %v", platform, err)
	}
	install := readmeBlock(t, "required_providers")
	install = regexp.MustCompile(`config_path = "[^"]*"`).ReplaceAllString(install, `config_path = "`+clustertest.Kubeconfig()+`"`)
	install = pinnedVersion.ReplaceAllString(install, `${1}"`+releaseVersion+`"`)
	first := readmeBlock(t, `resource "training_mpi_job" "first"`)
	for name, cli := range installCLIs(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(install+"\n"+first), 0o600); err != nil {
				t.Fatal(err)
			}
			rc := cliConfigFromREADME(t, release, cli.host)
			runCLI(t, dir, cli.path, rc, "init", "-input=false")
			lock, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(lock), `version     = "`+releaseVersion+`"`) || !strings.Contains(string(lock), h1) {
				t.Errorf("the lock file does not record version %s with the release archive's hash %s:\n%s", releaseVersion, h1, lock)
			}
			if out := runCLI(t, dir, cli.path, rc, "plan", "-input=false", "-no-color"); !strings.Contains(out, "training_mpi_job.first will be created") {
				t.Errorf("the first job does not plan:\n%s", out)
			}
		})
	}
}

// Every example runs as written: each folder of examples/ (its own required_providers block
// included) initialises against the release's mirror and validates, with Terraform and OpenTofu
// (the actions' with Terraform alone: OpenTofu has none).
func TestAccInstall_everyExampleInitialisesAndValidates(t *testing.T) {
	release := releaseDir(t)
	version := releaseVersion(t, release)
	var dirs []string
	err := filepath.WalkDir("../../examples", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".tf" && !slices.Contains(dirs, filepath.Dir(p)) && !isPlatformExample(filepath.Dir(p)) {
			dirs = append(dirs, filepath.Dir(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 15 {
		t.Fatalf("%d example folders found", len(dirs))
	}
	for name, cli := range installCLIs(t) {
		rc := cliConfigFromREADME(t, release, cli.host)
		for _, example := range dirs {
			t.Run(name+"/"+strings.TrimPrefix(example, "../../examples/"), func(t *testing.T) {
				if strings.HasPrefix(example, "../../examples/actions/") && name == "tofu" {
					t.Skip("OpenTofu has no actions: their examples run where the CLI has them (Terraform 1.14 and later)")
				}
				dir := t.TempDir()
				files, err := filepath.Glob(filepath.Join(example, "*.tf"))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range files {
					raw, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					// The release under test is a prerelease: pinned by its exact version.
					raw = pinnedVersion.ReplaceAll(raw, []byte(`${1}"`+version+`"`))
					if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), raw, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				runCLI(t, dir, cli.path, rc, "init", "-input=false", "-backend=false")
				runCLI(t, dir, cli.path, rc, "validate")
			})
		}
	}
}
