package realnode_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
)

// TestRealNode_podsTalkByServiceAndNameAndStopRestoresTheMachine starts a cluster with the real
// node and runs two pods of the training image on it: one serves HTTP and reaches itself through
// its own Service (hairpin); the other reaches it through the Service's ClusterIP (kube-proxy) and
// through its pod DNS name under a headless Service (CoreDNS). The pods' own output says what
// worked. Stopping the cluster must leave the machine as it was: no bridge, chain, mount, cgroup,
// sysctl or folder of the node's left, and what another runtime on the machine has (chains of the
// same prefixes, a shim of another containerd, a mount and a shim's socket where containerd keeps
// its own) untouched.
func TestRealNode_podsTalkByServiceAndNameAndStopRestoresTheMachine(t *testing.T) {
	clustertest.RequireRealNode(t)
	foreignShim := plantForeignRuntime(t)
	before := machineSnapshot(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	opts, err := clustertest.DefaultOptions(wd)
	if err != nil {
		t.Fatal(err)
	}
	opts.RealNode = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, _, err := cluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	ns := "real-node-test"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	for _, svc := range []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "sub"}, Spec: corev1.ServiceSpec{Selector: labels, ClusterIP: corev1.ClusterIPNone,
			PublishNotReadyAddresses: true}},
	} {
		if _, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	image := c.Node.Images[images.Training]
	server := realNodePod("server", image, `
import http.server, socketserver, threading, time, urllib.request
srv = socketserver.TCPServer(("", 8080), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
for _ in range(300):
    try:
        urllib.request.urlopen("http://web/", timeout=2).read()
        print("hairpin ok", flush=True)
        break
    except Exception as e:
        time.sleep(0.2)
time.sleep(3600)
`)
	server.Labels = labels
	server.Spec.Hostname, server.Spec.Subdomain = "server", "sub"
	client := realNodePod("client", image, `
import socket, time, urllib.request
def get(url):
    for _ in range(300):
        try:
            return urllib.request.urlopen(url, timeout=2).status
        except Exception as e:
            last = e
            time.sleep(0.2)
    raise SystemExit("%s: %s" % (url, last))
print("service", get("http://web/"), "clusterip", socket.gethostbyname("web"), flush=True)
print("pod name", get("http://server.sub:8080/"), flush=True)
`)
	created := time.Now()
	for _, p := range []*corev1.Pod{server, client} {
		if _, err := kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A figure for the README, not a check: how long the two pods took to run.
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, "server", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	t.Logf("pods created to the server Running: %s", time.Since(created).Round(10*time.Millisecond))
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, "client", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodFailed {
			return false, fmt.Errorf("the client pod failed: %s", podLog(ctx, kube, ns, "client"))
		}
		return p.Status.Phase == corev1.PodSucceeded, nil
	})
	if err != nil {
		t.Fatalf("waiting for the client pod: %v\nclient: %s\nserver: %s", err, podLog(ctx, kube, ns, "client"), podLog(ctx, kube, ns, "server"))
	}
	out := podLog(ctx, kube, ns, "client")
	if !strings.Contains(out, "service 200 clusterip 10.96.") || !strings.Contains(out, "pod name 200") {
		t.Errorf("the client did not reach the server through the Service's ClusterIP and its pod name:\n%s", out)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return strings.Contains(podLog(ctx, kube, ns, "server"), "hairpin ok"), nil
	})
	if err != nil {
		t.Errorf("the server never reached itself through its Service: %s", podLog(ctx, kube, ns, "server"))
	}

	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	after := machineSnapshot(t)
	if diff := diffLines(before, after); diff != "" {
		t.Errorf("the machine is not as it was before the real node:\n%s", diff)
	}
	if err := foreignShim.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the shim of another containerd was killed by the real node's stop: %v", err)
	}
}

// plantForeignRuntime gives the machine what another container runtime there would have, in the
// places and with the names the real node's own use: iptables chains of kube-proxy's and the CNI
// plugins' prefixes with a rule that jumps to one, a runc shim of a containerd at the default
// address, a container's rootfs mount and a shim's socket under /run/containerd. It returns the
// shim's process, and removes it all when the test ends.
func plantForeignRuntime(t *testing.T) *os.Process {
	t.Helper()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
	}
	const chain, cniChain = "KUBE-FOREIGN-RUNTIME", "CNI-foreign0123456789ab"
	rootfs := "/run/containerd/io.containerd.runtime.v2.task/k8s.io/foreign/rootfs"
	socket := "/run/containerd/s/foreign0123456789"
	_, statErr := os.Stat("/run/containerd")
	hadContainerd := statErr == nil
	// Undone from the start, so that a plant that fails half-way leaves nothing for the next run.
	var cmd *exec.Cmd
	t.Cleanup(func() {
		if cmd != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		_ = exec.Command("umount", rootfs).Run()
		_ = exec.Command("iptables", "-w", "-t", "filter", "-D", "FORWARD", "-j", chain).Run()
		_ = exec.Command("iptables", "-w", "-t", "filter", "-X", chain).Run()
		_ = exec.Command("iptables", "-w", "-t", "nat", "-X", cniChain).Run()
		_ = os.Remove(socket)
		_ = os.RemoveAll("/run/containerd/io.containerd.runtime.v2.task/k8s.io/foreign")
		if !hadContainerd {
			_ = os.RemoveAll("/run/containerd")
		}
	})
	run("iptables", "-w", "-t", "filter", "-N", chain)
	run("iptables", "-w", "-t", "filter", "-A", "FORWARD", "-j", chain)
	run("iptables", "-w", "-t", "nat", "-N", cniChain)
	for _, dir := range []string{rootfs, filepath.Dir(socket)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run("mount", "-t", "tmpfs", "foreign", rootfs)
	if err := os.WriteFile(socket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(t.TempDir(), "containerd-shim-runc-v2")
	if err := os.Symlink(sh, shim); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(shim, "-c", "sleep 3600", "-namespace", "k8s.io", "-id", "foreign", "-address", "/run/containerd/containerd.sock")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process
}

func realNodePod(name, image, program string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			NodeSelector:                  map[string]string{realnode.Label: "true"},
			Tolerations:                   []corev1.Toleration{{Key: realnode.Taint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{
				Name: "main", Image: image, ImagePullPolicy: corev1.PullNever,
				Command: []string{"python3", "-c", program},
			}},
		},
	}
}

func podLog(ctx context.Context, kube kubernetes.Interface, ns, name string) string {
	data, err := kube.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return string(data)
}

// machineSnapshot is what the real node changes on the machine, one fact a line.
func machineSnapshot(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, key := range []string{"net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables", "vm.overcommit_memory", "kernel.panic", "kernel.panic_on_oops"} {
		data, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(key, ".", "/"))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, "sysctl "+key+"="+strings.TrimSpace(string(data)))
	}
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	for _, l := range strings.Split(string(links), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines = append(lines, "link "+strings.TrimSuffix(f[1], ":"))
		}
	}
	for _, tool := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle", "raw"} {
			out, _ := exec.Command(tool, "-w", "-t", table, "-S").Output()
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				lines = append(lines, tool+" "+table+" "+l)
			}
		}
	}
	if out, err := exec.Command("nft", "list", "tables").Output(); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			lines = append(lines, "nft "+l)
		}
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(l); len(f) > 4 {
			lines = append(lines, "mount "+f[4])
		}
	}
	for _, dir := range []string{"/sys/fs/cgroup/memory/kubepods", "/sys/fs/cgroup/cpu/kubepods", "/run/containerd", "/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/run/kubetrain-node"} {
		if _, err := os.Stat(dir); err == nil {
			lines = append(lines, "exists "+dir)
		}
	}
	sort.Strings(lines)
	return lines
}

func diffLines(before, after []string) string {
	count := map[string]int{}
	for _, l := range before {
		count[l]++
	}
	for _, l := range after {
		count[l]--
	}
	var diff []string
	for l, n := range count {
		switch {
		case n > 0:
			diff = append(diff, "- "+l)
		case n < 0:
			diff = append(diff, "+ "+l)
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, "\n")
}
