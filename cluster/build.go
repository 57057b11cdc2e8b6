package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// A binary is one executable of the local cluster, built from a module under components/.
type binary struct {
	name      string // executable name, and the key of its process
	component string // folder under components/ holding the module that builds it
	pkg       string // package to build, relative to that module
	// stamped binaries carry the release of k8s.io/kubernetes their module requires, because
	// kubectl (and Kueue, which reads the server's version) cannot parse the unstamped
	// "v0.0.0-master".
	stamped bool
	// static builds without cgo: the binary goes into an image that has no C library.
	static bool
}

var binaries = []binary{
	{name: "etcd", component: "etcd", pkg: "go.etcd.io/etcd/server/v3"},
	{name: "kube-apiserver", component: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", stamped: true},
	{name: "kube-controller-manager", component: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", stamped: true},
	{name: "kube-scheduler", component: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-scheduler", stamped: true},
	{name: "kwok", component: "kwok", pkg: "sigs.k8s.io/kwok/cmd/kwok"},
	{name: "mpi-operator", component: "mpi-operator", pkg: "."},
	{name: "training-operator", component: "training-operator", pkg: "."},
	{name: "frameworkcontroller", component: "frameworkcontroller", pkg: "github.com/microsoft/frameworkcontroller/cmd/frameworkcontroller"},
	{name: "kueue", component: "kueue", pkg: "."},
	{name: "jobset", component: "jobset", pkg: "sigs.k8s.io/jobset"},
	{name: "trainer", component: "trainer", pkg: "."},
	// Answers Kueue's ProvisioningRequests as a cloud's autoscaler would.
	{name: "provisioner", component: "provisioner", pkg: "."},
	// The real node (package realnode): its kubelet, kube-proxy and cluster DNS run on the machine; pause
	// and etcd-image go into the images it builds (package images).
	{name: "kubelet", component: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kubelet", stamped: true},
	{name: "kube-proxy", component: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-proxy", stamped: true},
	{name: "coredns", component: "coredns", pkg: "github.com/coredns/coredns", static: true},
	{name: "pause", component: "pause", pkg: ".", static: true},
	{name: "nslookup", component: "nslookup", pkg: ".", static: true},
	{name: "etcd-image", component: "etcd-image", pkg: "go.etcd.io/etcd/server/v3", static: true},
}

func versionLDFlags(kubernetesVersion string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(kubernetesVersion, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var flags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X "+pkg+".gitVersion="+kubernetesVersion,
			"-X "+pkg+".gitMajor="+major,
			"-X "+pkg+".gitMinor="+minor)
	}
	return strings.Join(flags, " ")
}

// Binaries builds every binary of generation gen that is not in the cache yet and returns their
// paths by name. The cache is keyed by the component module's files, the build flags and the Go
// version, so a second call builds nothing and a version bump (or another generation) builds
// anew. Concurrent callers (two test binaries) serialise on a lock file.
func Binaries(ctx context.Context, sourceDir, gen, cacheDir string, progress io.Writer) (map[string]string, error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := host.LockFile(filepath.Join(cacheDir, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	kubernetesVersion, err := host.ModuleVersion(ctx, ComponentDir(sourceDir, gen, "kubernetes"), "k8s.io/kubernetes")
	if err != nil {
		return nil, err
	}
	paths := make(map[string]string, len(binaries))
	for _, b := range binaries {
		moduleDir := ComponentDir(sourceDir, gen, b.component)
		ldflags := ""
		if b.stamped {
			ldflags = versionLDFlags(kubernetesVersion)
		}
		key, err := buildKey(moduleDir, b, ldflags)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(cacheDir, b.name+"-"+key, b.name)
		paths[b.name] = out
		if _, err := os.Stat(out); err == nil {
			continue
		}
		_, _ = fmt.Fprintf(progress, "building %s (cached as %s)...\n", b.name, filepath.Base(filepath.Dir(out)))
		start := time.Now()
		if err := goBuild(ctx, moduleDir, b, ldflags, out); err != nil {
			return nil, err
		}
		_, _ = fmt.Fprintf(progress, "built %s in %s\n", b.name, time.Since(start).Round(time.Second))
	}
	return paths, nil
}

func goBuild(ctx context.Context, moduleDir string, b binary, ldflags, out string) error {
	tmp := out + ".tmp"
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", strings.TrimSpace("-s -w "+ldflags), "-o", tmp, b.pkg)
	cmd.Dir = moduleDir
	// GOFLAGS from the caller (say -race from a test run) would change what is built.
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if b.static {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s in %s: %w\n%s", b.name, moduleDir, err, output)
	}
	return os.Rename(tmp, out)
}

// buildKey hashes what decides the binary: the module's go.mod, go.sum and Go sources, the
// package, the flags and the toolchain.
func buildKey(moduleDir string, b binary, ldflags string) (string, error) {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%s\n%s\n%s\n%s/%s\n", runtime.Version(), b.pkg, ldflags, runtime.GOOS, runtime.GOARCH)
	if b.static {
		_, _ = fmt.Fprintln(h, "static")
	}
	entries, err := os.ReadDir(moduleDir)
	if err != nil {
		return "", fmt.Errorf("reading component %s: %w", b.component, err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (n == "go.mod" || n == "go.sum" || strings.HasSuffix(n, ".go")) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(moduleDir, n))
		if err != nil {
			return "", err
		}
		_, _ = fmt.Fprintf(h, "%s %d\n", n, len(data))
		_, _ = h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// operatorModules are the modules whose releases the operators of the local cluster run, by
// component, in the order start-up reports them.
var operatorModules = []struct{ component, module string }{
	{"mpi-operator", "github.com/kubeflow/mpi-operator"},
	{"training-operator", "github.com/kubeflow/training-operator"},
	{"frameworkcontroller", "github.com/microsoft/frameworkcontroller"},
	{"kueue", kueueModule},
	{"trainer", trainerModule},
	{"jobset", jobsetModule},
}
