// Package realnode is the local cluster's real node: one kubelet-backed node beside KWOK's
// simulated ones, on which containers really start.
package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// The real node: one kubelet-backed node beside KWOK's simulated ones, on which containers
// really start (containerd, runc and the CNI plugins from Debian's packages; kubelet, kube-proxy
// and CoreDNS built from their modules). It changes the state of the whole machine (a bridge,
// cgroups, iptables chains, sysctls, runtime folders), so its names are fixed and there is one
// per machine; machine.go undoes all of it.
const (
	// Name is the real node's name.
	Name = "kubetrain-real-node"
	// Label (value "true") marks the real node: a pod selects it with this node selector.
	Label = "training.kubetrain.io/real-node"
	// Taint (value "true", NoSchedule) keeps off the real node every pod that does not
	// tolerate it, so that only jobs that ask for real containers land there.
	Taint = "training.kubetrain.io/real-node"

	// The pods' network: a bridge whose gateway address is also the node's address (the kubelet
	// serves there, CoreDNS answers there), so that every packet stays on this machine.
	nodeBridge    = "kubetrain0"
	nodeIP        = "10.244.0.1"
	podSubnet     = "10.244.0.0/24"
	clusterDomain = "cluster.local"

	// nodeDataDir holds the containerd content store and snapshots (kept between runs: the
	// images imported once stay there) and, per run, the kubelet's root folder.
	nodeDataDir = "/var/lib/kubetrain-node"
	// nodeRunDir holds one run's CNI address allocations.
	nodeRunDir = "/run/kubetrain-node"
	// containerdStateDir is the node's containerd's state folder and containerdSocket its
	// address, both its own, so that nothing of another containerd on the machine (Docker's, the
	// system's) is taken for the node's. Its shims put their sockets in shimSocketDir whatever
	// the configuration says; those are removed one by one (nodeShims).
	containerdStateDir = nodeRunDir + "/containerd"
	containerdSocket   = containerdStateDir + "/containerd.sock"
	shimSocketDir      = "/run/containerd/s"
	// kubeletPort and kubeletHealthPort are the kubelet's defaults: one kubelet per machine.
	kubeletPort       = 10250
	kubeletHealthPort = 10248
)

// Env set to 1 asks for the real node (localcluster, clustertest).
const Env = "TRAINING_REAL_NODE"

func kubeletRootDir() string { return filepath.Join(nodeDataDir, "kubelet") }

// Unavailable says why this machine cannot run the real node, or "" when it can: the
// node needs root, cgroups and the Debian packages that `make real-node-packages` installs.
func Unavailable() string {
	if os.Geteuid() != 0 {
		return "the real node needs root (it runs containerd and a kubelet, makes a bridge and iptables chains); this process runs as uid " + strconv.Itoa(os.Geteuid())
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		if _, err2 := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err2 != nil {
			return "the real node needs cgroups, and /sys/fs/cgroup has neither a v1 memory controller nor a v2 hierarchy"
		}
	}
	var missing []string
	for _, tool := range nodeTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			missing = append(missing, filepath.Join(cniBinDir, plugin))
		}
	}
	if len(missing) > 0 {
		return "the real node needs " + strings.Join(missing, ", ") + " (make real-node-packages installs them from Debian's packages)"
	}
	return ""
}

// nodeTools are the programs the real node runs or drives, from Debian's packages.
var nodeTools = []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip", "iptables", "ip6tables", "tar", "debootstrap", "chroot", "apt-get", "dpkg-deb"}

// cniBinDir is where Debian's containernetworking-plugins installs the CNI plugins.
const cniBinDir = "/usr/lib/cni"

// Info describes a running real node for the tests: the images it holds.
type Info struct {
	// Images maps an image's role (images.Training, images.Etcd, images.Pause) to the name it is
	// loaded under.
	Images map[string]string `json:"images"`
}

// Config is what starting the real node needs from the cluster that starts it.
type Config struct {
	// Dir is the node's folder of this run (its configuration files).
	Dir string
	// Kubeconfig is the admin kubeconfig the node's programs use.
	Kubeconfig string
	// SourceDir is the repository's cluster folder (the images' sources).
	SourceDir string
	// Binaries are the programs built for the cluster by name; Start adds containerd's.
	Binaries map[string]string
	Kube     kubernetes.Interface
	Log      io.Writer
	// RunEnv starts a program of Binaries in the background in dir, with extra environment
	// variables, as the cluster starts its components (recorded, stopped with them).
	RunEnv func(name, dir string, env []string, args ...string) error
	// WaitFor polls check until it is true or timeout, failing at once when a started program
	// exits.
	WaitFor func(ctx context.Context, what string, timeout time.Duration, check func(context.Context) (bool, error)) error
	// Record saves what is known of the node with the cluster's state; Start calls it before it
	// touches the machine, so that a stop undoes that even if start-up fails.
	Record func(*Info) error
	// Problems says what keeps a node from being healthy (none: it is).
	Problems func(*corev1.Node) []string
}

// Start makes the machine ready, starts containerd, loads the images, starts the kubelet,
// kube-proxy and CoreDNS, and waits until the node is Ready and names resolve.
func Start(ctx context.Context, cfg Config) error {
	started := time.Now()
	if reason := Unavailable(); reason != "" {
		return errors.New(reason)
	}
	info := &Info{Images: map[string]string{}}
	if err := cfg.Record(info); err != nil {
		return err
	}
	if err := prepareMachine(cfg.Log); err != nil {
		return fmt.Errorf("preparing the machine for the real node: %w", err)
	}
	dir := cfg.Dir
	run := func(name string, args ...string) error { return cfg.RunEnv(name, dir, nil, args...) }
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	containerdPath, err := exec.LookPath("containerd")
	if err != nil {
		return err
	}
	cfg.Binaries["containerd"] = containerdPath
	registries := filepath.Join(dir, "registries")
	if _, err := writeNodeFile(filepath.Join(registries, LocalRegistry), "hosts.toml", registryHosts()); err != nil {
		return err
	}
	containerdConfig, err := writeNodeFile(dir, "containerd.toml", containerdConfigTOML(filepath.Join(dir, "cni"), registries))
	if err != nil {
		return err
	}
	if _, err := writeNodeFile(filepath.Join(dir, "cni"), "10-kubetrain.conflist", cniConfig()); err != nil {
		return err
	}
	if err := cfg.RunEnv("containerd", dir, []string{"HTTP_PROXY=" + noRegistry, "HTTPS_PROXY=" + noRegistry, "NO_PROXY="},
		"--config", containerdConfig); err != nil {
		return err
	}
	if err := cfg.WaitFor(ctx, "containerd", 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := ctr(ctx, "version")
		return err == nil, err
	}); err != nil {
		return err
	}
	loaded, err := images.Load(ctx, images.Build{SourceDir: cfg.SourceDir, Binaries: cfg.Binaries, Log: cfg.Log, Ctr: ctr})
	if err != nil {
		return err
	}
	info.Images = loaded
	if err := cfg.Record(info); err != nil {
		return err
	}

	kubeletConfig, err := writeNodeFile(dir, "kubelet.yaml", kubeletConfigYAML(dir))
	if err != nil {
		return err
	}
	if _, err := writeNodeFile(dir, "resolv.conf", "# the real node's pods resolve through the cluster DNS alone\n"); err != nil {
		return err
	}
	if err := run("kubelet",
		"--config="+kubeletConfig,
		"--kubeconfig="+cfg.Kubeconfig,
		"--root-dir="+kubeletRootDir(),
		"--hostname-override="+Name,
		"--node-ip="+nodeIP,
		"--node-labels="+Label+"=true",
		"--v=1",
	); err != nil {
		return err
	}
	proxyPorts := [2]int{}
	for i := range proxyPorts {
		if proxyPorts[i], err = host.FreePort(); err != nil {
			return err
		}
	}
	proxyConfig, err := writeNodeFile(dir, "kube-proxy.yaml", kubeProxyConfigYAML(cfg.Kubeconfig, proxyPorts))
	if err != nil {
		return err
	}
	if err := run("kube-proxy", "--config="+proxyConfig, "--v=1"); err != nil {
		return err
	}
	corefilePath, err := writeNodeFile(dir, "Corefile", corefile(cfg.Kubeconfig))
	if err != nil {
		return err
	}
	if err := run("coredns", "-conf", corefilePath); err != nil {
		return err
	}
	if err := cfg.WaitFor(ctx, "the real node to be Ready", 2*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := cfg.Kube.CoreV1().Nodes().Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if problems := cfg.Problems(n); len(problems) > 0 {
			return false, errors.New(strings.Join(problems, "; "))
		}
		return true, nil
	}); err != nil {
		return err
	}
	if err := cfg.WaitFor(ctx, "the cluster DNS", time.Minute, func(ctx context.Context) (bool, error) {
		addrs, err := clusterResolver().LookupHost(ctx, "kubernetes.default.svc."+clusterDomain)
		return err == nil && len(addrs) > 0, err
	}); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(cfg.Log, "real node %s ready in %s (images: %s)\n", Name, time.Since(started).Round(100*time.Millisecond), strings.Join(slices.Sorted(maps.Values(loaded)), ", "))
	return nil
}

// noRegistry is where containerd's registry requests go: a closed port on this machine, so that
// an image that is not loaded fails to pull at once (ErrImagePull) and nothing leaves the machine.
const noRegistry = "http://127.0.0.1:9"

// LocalRegistry is the registry host whose images the real node pulls over plain HTTP from
// LocalRegistryAddress on this machine: whatever serves there (a test's registry) answers for it,
// and while nothing does, every pull of it is refused.
const (
	LocalRegistry        = "registry.kubetrain.test"
	LocalRegistryAddress = "127.0.0.1:5001"
)

// registryHosts is containerd's hosts.toml for LocalRegistry: its only host is the local address
// (no fallback to the name itself, which resolves nowhere).
func registryHosts() string {
	return fmt.Sprintf("server = %[1]q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+LocalRegistryAddress)
}

// clusterResolver asks the cluster DNS, as a pod does.
func clusterResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(nodeIP, "53"))
	}}
}

// Stop deletes the real node's pods while its kubelet runs (kube, nil when the kubelet does not
// run: so the CNI plugin frees their addresses and interfaces), then stops its processes
// (stopComponent, by name) and undoes what it changed on the machine; kubeProxy is kube-proxy's
// program ("" when it was never built). The control plane must still run.
func Stop(kube kubernetes.Interface, stopComponent func(name string) error, kubeProxy string) error {
	var errs []error
	if kube != nil {
		errs = append(errs, drain(kube))
	}
	for _, name := range []string{"coredns", "kube-proxy", "kubelet"} {
		errs = append(errs, stopComponent(name))
	}
	if bin := kubeProxy; bin != "" {
		// kube-proxy removes its own chains and rules.
		if out, err := exec.Command(bin, "--cleanup").CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w: %s", err, out))
		}
	}
	// The containers outlive containerd in their shims: restoreMachine kills them.
	errs = append(errs, stopComponent("containerd"), restoreMachine())
	return errors.Join(errs...)
}

// drain deletes every pod bound to the real node at once and waits (up to 60 s) for the kubelet
// to have torn them down.
func drain(kube kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	selector := "spec.nodeName=" + Name
	pods, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return fmt.Errorf("listing the real node's pods: %w", err)
	}
	for _, p := range pods.Items {
		_ = kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}
	left := len(pods.Items)
	for {
		pods, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err == nil {
			if left = len(pods.Items); left == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the real node's pods were not gone after 60 s: %d left", left)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ImageManifest is the manifest (its media type and bytes) of an image loaded into the real node,
// for a test's registry to serve the same image under another name: containerd holds every blob
// it names, so a pull of it fetches the manifest alone.
func ImageManifest(ctx context.Context, name string) (mediaType string, manifest []byte, err error) {
	out, err := ctr(ctx, "images", "ls", "name=="+name)
	if err != nil {
		return "", nil, err
	}
	// REF TYPE DIGEST SIZE PLATFORMS LABELS, under a header.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || len(strings.Fields(lines[1])) < 3 {
		return "", nil, fmt.Errorf("the real node has no image %s: %q", name, out)
	}
	f := strings.Fields(lines[1])
	m, err := ctr(ctx, "content", "get", f[2])
	return f[1], []byte(m), err
}

// ctr runs containerd's client against the real node's containerd, in the CRI's namespace, and
// returns what it printed.
func ctr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", containerdSocket, "-n", "k8s.io"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
