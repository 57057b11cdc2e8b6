// Command release writes a release of the provider into a folder: the files a provider registry
// serves (a zip per platform, the registry manifest, SHA256SUMS and, given a GPG key, its
// signature; goreleaser's names, as in the provider scaffolding) and a filesystem mirror of them
// in the unpacked layout Terraform and OpenTofu read (HOST/kubetrain/training/VERSION/OS_ARCH/),
// for registry.terraform.io and registry.opentofu.org.
//
//	go run ./tools/release -version 0.1.0 -dist dist [-platforms linux_amd64,darwin_arm64]
//
// With GPG_FINGERPRINT set, SHA256SUMS is signed with that key (gpg --detach-sign), as the
// registry requires of a published release.
package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

const (
	name      = "terraform-provider-training"
	namespace = "kubetrain"
	typeName  = "training"
)

// registryPlatforms are the platforms a release is built for by default: those platform teams
// run Terraform on.
var registryPlatforms = []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64", "windows_arm64"}

// mirrorHosts are the registries whose filesystem mirror layout the release is written in.
var mirrorHosts = []string{"registry.terraform.io", "registry.opentofu.org"}

var semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func main() {
	explicit := flag.String("version", "", "the release's version, x.y.z (by default, from git: see version.go)")
	dist := flag.String("dist", "dist", "the folder to write the release into (replaced)")
	platforms := flag.String("platforms", strings.Join(registryPlatforms, ","), "OS_ARCH pairs to build, comma-separated")
	flag.Parse()
	if *explicit != "" && !semver.MatchString(*explicit) {
		log.Fatalf("-version %q: want x.y.z (semantic versioning, without a v)", *explicit)
	}
	version, err := releaseVersion(gitIn("."), *explicit)
	if err != nil {
		log.Fatal(err)
	}
	if err := release(version, *dist, strings.Split(*platforms, ",")); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("release %s in %s\n", version, *dist)
}

func release(version, dist string, platforms []string) error {
	if err := os.RemoveAll(dist); err != nil {
		return err
	}
	build := filepath.Join(dist, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		return err
	}
	// Every file of the release gets the commit's time, so that a release of one commit is the
	// same bytes wherever it is built.
	stamp, err := commitTime()
	if err != nil {
		return err
	}
	var sums []string
	for _, platform := range platforms {
		goos, goarch, ok := strings.Cut(platform, "_")
		if !ok {
			return fmt.Errorf("platform %q: want OS_ARCH", platform)
		}
		binary := name + "_v" + version
		if goos == "windows" {
			binary += ".exe"
		}
		out := filepath.Join(build, platform, binary)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", out, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %w", platform, err)
		}
		archive := fmt.Sprintf("%s_%s_%s.zip", name, version, platform)
		if err := zipFile(filepath.Join(dist, archive), out, stamp); err != nil {
			return err
		}
		sum, err := sha256File(filepath.Join(dist, archive))
		if err != nil {
			return err
		}
		sums = append(sums, sum+"  "+archive)
		for _, host := range mirrorHosts {
			dir := filepath.Join(dist, "mirror", host, namespace, typeName, version, platform)
			if err := copyFile(filepath.Join(dir, binary), out, 0o755); err != nil {
				return err
			}
		}
	}
	manifest := fmt.Sprintf("%s_%s_manifest.json", name, version)
	if err := copyFile(filepath.Join(dist, manifest), "terraform-registry-manifest.json", 0o644); err != nil {
		return err
	}
	sum, err := sha256File(filepath.Join(dist, manifest))
	if err != nil {
		return err
	}
	sums = append(sums, sum+"  "+manifest)
	sort.Slice(sums, func(i, j int) bool { return sums[i][66:] < sums[j][66:] })
	checksums := filepath.Join(dist, fmt.Sprintf("%s_%s_SHA256SUMS", name, version))
	if err := os.WriteFile(checksums, []byte(strings.Join(sums, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if key := os.Getenv("GPG_FINGERPRINT"); key != "" {
		cmd := exec.Command("gpg", "--batch", "--local-user", key, "--output", checksums+".sig", "--detach-sign", checksums)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("signing %s: %w", checksums, err)
		}
	}
	return os.RemoveAll(build)
}

// commitTime is the time of the commit the release is built from (SOURCE_DATE_EPOCH when set).
func commitTime() (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var secs int64
		if _, err := fmt.Sscan(s, &secs); err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	out, err := exec.Command("git", "log", "-1", "--format=%ct").Output()
	if err != nil {
		return time.Time{}, errors.New("the commit's time cannot be read (not a git checkout?): set SOURCE_DATE_EPOCH")
	}
	var secs int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &secs); err != nil {
		return time.Time{}, err
	}
	return time.Unix(secs, 0).UTC(), nil
}

// zipFile writes a zip holding the one executable file src, as goreleaser's archives hold it.
func zipFile(dst, src string, stamp time.Time) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read only
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	z := zip.NewWriter(out)
	h := &zip.FileHeader{Name: filepath.Base(src), Method: zip.Deflate, Modified: stamp}
	h.SetMode(0o755)
	w, err := z.CreateHeader(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, in); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return out.Close()
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(dst, src string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, raw, mode)
}
