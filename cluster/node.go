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
	// containerdStateDir is containerd's state folder; its shims put their sockets under it
	// whatever the configuration says, so it is the default one.
	containerdStateDir = "/run/containerd"
	containerdSocket   = containerdStateDir + "/containerd.sock"
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
	containerdConfig, err := writeNodeFile(dir, "containerd.toml", containerdConfigTOML(filepath.Join(dir, "cni")))
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

// clusterResolver asks the cluster DNS, as a pod does.
func clusterResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(nodeIP, "53"))
	}}
}

func writeNodeFile(dir, name, content string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(content), 0o644)
}

// containerdConfigTOML is containerd's configuration for the real node. restrict_oom_score_adj:
// root on these machines lacks CAP_SYS_RESOURCE, and runc fails every sandbox that asks for a
// lower OOM score than its parent's.
func containerdConfigTOML(cniConfDir string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %[3]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[5]q
    conf_dir = %[6]q
    max_conf_num = 1
`, filepath.Join(nodeDataDir, "containerd"), containerdStateDir, containerdSocket, PauseImage, cniBinDir, cniConfDir)
}

// cniConfig is one bridge with host-local addresses. hairpinMode lets a pod reach itself through
// a Service (a c10d rendezvous host reaches its own store so); no ipMasq: pods talk only to pods,
// Services and this node (node_machine.go drops what would leave the machine).
func cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "kubetrain",
  "plugins": [{
    "type": "bridge",
    "bridge": %[1]q,
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": %[2]q, "gateway": %[3]q}]],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dataDir": %[4]q
    }
  }]
}
`, nodeBridge, podSubnet, nodeIP, filepath.Join(nodeRunDir, "cni"))
}

// kubeletConfigYAML: the kubelet serves on the node address only, to anyone (the API server
// reaches it there for logs and exec without a client certificate); cgroup v1 is allowed
// explicitly; images are never garbage-collected (they are loaded, not pulled); eviction
// thresholds are low so that a busy CI disk does not evict the tests' pods.
func (s *starter) kubeletConfigYAML(dir string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[4]s
clusterDNS: [%[1]s]
clusterDomain: %[5]s
resolvConf: %[6]s
podCIDR: %[7]s
registerWithTaints:
- {key: %[8]s, value: "true", effect: NoSchedule}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: "1%%", nodefs.inodesFree: "1%%", imagefs.available: "1%%"}
serializeImagePulls: false
podLogsDir: %[9]s
protectKernelDefaults: false
`, nodeIP, kubeletPort, kubeletHealthPort, containerdSocket, clusterDomain, filepath.Join(dir, "resolv.conf"), podSubnet,
		RealNodeTaint, filepath.Join(kubeletRootDir(), "pod-logs"))
}

// kubeProxyConfigYAML: iptables mode; node ports on the node address only (so route_localnet
// stays 0); the conntrack settings left as the machine has them.
func (s *starter) kubeProxyConfigYAML(ports [2]int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %[1]s}
mode: iptables
hostnameOverride: %[2]s
clusterCIDR: %[3]s
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
nodePortAddresses: [%[6]s/32]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
`, s.c.Kubeconfig, RealNodeName, podSubnet, ports[0], ports[1], nodeIP)
}

// corefile is kubeadm's, answering on the node address, with a 5 s TTL (with 30 a launcher that
// looked a worker up before its record existed waited 30 s on the cached NXDOMAIN) and without
// forward: no name outside the cluster is ever looked up from a pod.
func (s *starter) corefile() string {
	return fmt.Sprintf(`.:53 {
    bind %[1]s
    errors
    kubernetes %[2]s in-addr.arpa ip6.arpa {
        kubeconfig %[3]s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    cache 5
}
`, nodeIP, clusterDomain, s.c.Kubeconfig)
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
