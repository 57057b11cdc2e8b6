package realnode

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
)

func writeNodeFile(dir, name, content string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(content), 0o644)
}

// containerdConfigTOML is containerd's configuration for the real node. restrict_oom_score_adj:
// root on these machines lacks CAP_SYS_RESOURCE, and runc fails every sandbox that asks for a
// lower OOM score than its parent's. registries holds a hosts.toml per registry host.
func containerdConfigTOML(cniConfDir, registries string) string {
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
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[7]q
`, filepath.Join(nodeDataDir, "containerd"), containerdStateDir, containerdSocket, images.PauseName, cniBinDir, cniConfDir, registries)
}

// cniConfig is one bridge with host-local addresses. hairpinMode lets a pod reach itself through
// a Service (a c10d rendezvous host reaches its own store so); no ipMasq: pods talk only to pods,
// Services and this node (machine.go drops what would leave the machine).
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
// thresholds are low so that a busy CI disk does not evict the tests' pods. The kubelet never
// verifies pull credentials for an image it has: since Kubernetes 1.35 it records the secret an
// image was pulled with, and the pull-secret test's private registry serves the loaded training
// image under another tag, after which every other pod of that image was made to pull it again,
// from no registry (ImagePullBackOff).
func kubeletConfigYAML(dir string) string {
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
imagePullCredentialsVerificationPolicy: NeverVerify
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
		Taint, filepath.Join(kubeletRootDir(), "pod-logs"))
}

// kubeProxyConfigYAML: iptables mode; node ports on the node address only (so route_localnet
// stays 0); the conntrack settings left as the machine has them.
func kubeProxyConfigYAML(kubeconfig string, ports [2]int) string {
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
`, kubeconfig, Name, podSubnet, ports[0], ports[1], nodeIP)
}

// corefile is kubeadm's, answering on the node address, with a 5 s TTL (with 30 a launcher that
// looked a worker up before its record existed waited 30 s on the cached NXDOMAIN) and without
// forward: no name outside the cluster is ever looked up from a pod.
func corefile(kubeconfig string) string {
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
`, nodeIP, clusterDomain, kubeconfig)
}
