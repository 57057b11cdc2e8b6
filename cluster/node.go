package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The real node: one kubelet-backed node beside KWOK's simulated ones, on which containers
// really start (containerd, runc and the CNI plugins from Debian's packages; kubelet, kube-proxy
// and CoreDNS built from their modules). It changes the state of the whole machine (a bridge,
// cgroups, iptables chains, sysctls, runtime folders), so its names are fixed and there is one
// per machine; node_machine.go undoes all of it.
const (
	// RealNodeName is the real node's name.
	RealNodeName = "kubetrain-real-node"
	// RealNodeLabel (value "true") marks the real node: a pod selects it with this node selector.
	RealNodeLabel = "training.kubetrain.io/real-node"
	// RealNodeTaint (value "true", NoSchedule) keeps off the real node every pod that does not
	// tolerate it, so that only jobs that ask for real containers land there.
	RealNodeTaint = "training.kubetrain.io/real-node"

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

// RealNodeEnv set to 1 asks for the real node (localcluster, clustertest).
const RealNodeEnv = "TRAINING_REAL_NODE"

func kubeletRootDir() string { return filepath.Join(nodeDataDir, "kubelet") }

// RealNodeUnavailable says why this machine cannot run the real node, or "" when it can: the
// node needs root, cgroups and the Debian packages that `make real-node-packages` installs.
func RealNodeUnavailable() string {
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

// NodeInfo describes a running real node for the tests: the images it holds.
type NodeInfo struct {
	// Images maps an image's role (ImageTraining, ImageEtcd, ImagePause) to the name it is
	// loaded under.
	Images map[string]string `json:"images"`
}

// startRealNode makes the machine ready, starts containerd, loads the images, starts the
// kubelet, kube-proxy and CoreDNS, and waits until the node is Ready and names resolve.
func (s *starter) startRealNode(ctx context.Context, c *clients) error {
	started := time.Now()
	if reason := RealNodeUnavailable(); reason != "" {
		return errors.New(reason)
	}
	s.c.Node = &NodeInfo{Images: map[string]string{}}
	// Recorded before the machine is touched, so that a stop undoes it even if start-up fails.
	if err := s.c.save(); err != nil {
		return err
	}
	if err := prepareMachine(s.log); err != nil {
		return fmt.Errorf("preparing the machine for the real node: %w", err)
	}
	dir := filepath.Join(s.c.RunDir, "node")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	containerdPath, err := exec.LookPath("containerd")
	if err != nil {
		return err
	}
	s.c.Binaries["containerd"] = containerdPath
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
	if err := s.runEnv("containerd", dir, []string{"HTTP_PROXY=" + noRegistry, "HTTPS_PROXY=" + noRegistry, "NO_PROXY="},
		"--config", containerdConfig); err != nil {
		return err
	}
	if err := s.waitFor(ctx, "containerd", 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := ctr(ctx, "version")
		return err == nil, err
	}); err != nil {
		return err
	}
	images, err := s.loadImages(ctx)
	if err != nil {
		return err
	}
	s.c.Node.Images = images
	if err := s.c.save(); err != nil {
		return err
	}

	kubeletConfig, err := writeNodeFile(dir, "kubelet.yaml", s.kubeletConfigYAML(dir))
	if err != nil {
		return err
	}
	if _, err := writeNodeFile(dir, "resolv.conf", "# the real node's pods resolve through the cluster DNS alone\n"); err != nil {
		return err
	}
	if err := s.run("kubelet", dir,
		"--config="+kubeletConfig,
		"--kubeconfig="+s.c.Kubeconfig,
		"--root-dir="+kubeletRootDir(),
		"--hostname-override="+RealNodeName,
		"--node-ip="+nodeIP,
		"--node-labels="+RealNodeLabel+"=true",
		"--v=1",
	); err != nil {
		return err
	}
	proxyPorts := [2]int{}
	for i := range proxyPorts {
		if proxyPorts[i], err = freePort(); err != nil {
			return err
		}
	}
	proxyConfig, err := writeNodeFile(dir, "kube-proxy.yaml", s.kubeProxyConfigYAML(proxyPorts))
	if err != nil {
		return err
	}
	if err := s.run("kube-proxy", dir, "--config="+proxyConfig, "--v=1"); err != nil {
		return err
	}
	corefile, err := writeNodeFile(dir, "Corefile", s.corefile())
	if err != nil {
		return err
	}
	if err := s.run("coredns", dir, "-conf", corefile); err != nil {
		return err
	}
	if err := s.waitFor(ctx, "the real node to be Ready", 2*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := c.kube.CoreV1().Nodes().Get(ctx, RealNodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if problems := NodeProblems(n); len(problems) > 0 {
			return false, errors.New(strings.Join(problems, "; "))
		}
		return true, nil
	}); err != nil {
		return err
	}
	if err := s.waitFor(ctx, "the cluster DNS", time.Minute, func(ctx context.Context) (bool, error) {
		addrs, err := clusterResolver().LookupHost(ctx, "kubernetes.default.svc."+clusterDomain)
		return err == nil && len(addrs) > 0, err
	}); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(s.log, "real node %s ready in %s (images: %s)\n", RealNodeName, time.Since(started).Round(100*time.Millisecond), strings.Join(slices.Sorted(maps.Values(images)), ", "))
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

// stopRealNode deletes the real node's pods while its kubelet runs (so the CNI plugin frees
// their addresses and interfaces), then stops its processes and undoes what it changed on the
// machine. The control plane must still run.
func (c *Cluster) stopRealNode() error {
	var errs []error
	if pid, ok := c.Processes["kubelet"]; ok && c.alive("kubelet", pid) {
		if client, err := newClients(c.Kubeconfig); err == nil {
			errs = append(errs, drainRealNode(client))
		}
	}
	for _, name := range []string{"coredns", "kube-proxy", "kubelet"} {
		errs = append(errs, c.stopComponent(name))
	}
	if bin, ok := c.Binaries["kube-proxy"]; ok {
		// kube-proxy removes its own chains and rules.
		if out, err := exec.Command(bin, "--cleanup").CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w: %s", err, out))
		}
	}
	// The containers outlive containerd in their shims: restoreMachine kills them.
	errs = append(errs, c.stopComponent("containerd"), restoreMachine())
	return errors.Join(errs...)
}

// drainRealNode deletes every pod bound to the real node at once and waits (up to 60 s) for the
// kubelet to have torn them down.
func drainRealNode(c *clients) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	selector := "spec.nodeName=" + RealNodeName
	pods, err := c.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return fmt.Errorf("listing the real node's pods: %w", err)
	}
	for _, p := range pods.Items {
		_ = c.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}
	left := len(pods.Items)
	for {
		pods, err := c.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: selector})
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
