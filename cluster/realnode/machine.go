package realnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// What the real node changes on the machine, and how it is undone. prepareMachine records the
// machine as it was (once: a later start after a crash must not record the crashed run's state
// as the original) and restoreMachine puts it back, so that a run that fails, or a test binary
// that is killed, leaves the next run (CI on the same machine) the machine it found.

// machineStateFile records the machine before the first real node changed it.
var machineStateFile = filepath.Join(nodeDataDir, "machine-before.json")

type machineState struct {
	// Sysctls are the values of nodeSysctls before the node.
	Sysctls map[string]string `json:"sysctls"`
	// Absent are the folders the node may create that did not exist.
	Absent []string `json:"absent"`
	// NFTables are the nftables tables that existed ("family name").
	NFTables []string `json:"nftables"`
	// Chains are, by tool (iptables, ip6tables), the chains of the node's prefixes that existed
	// ("TABLE CHAIN"): another runtime's, never removed.
	Chains map[string][]string `json:"chains"`
}

// chainTools are the iptables front ends of the families the node makes chains in.
var chainTools = []string{"iptables", "ip6tables"}

// nodeSysctls are set for the node (forwarding and bridge netfilter for pods and Services), or
// set by its kubelet (kernel defaults it insists on).
var nodeSysctls = map[string]string{
	"net.ipv4.ip_forward":                 "1",
	"net.bridge.bridge-nf-call-iptables":  "1",
	"net.bridge.bridge-nf-call-ip6tables": "1",
	"vm.overcommit_memory":                "",
	"kernel.panic":                        "",
	"kernel.panic_on_oops":                "",
}

// nodeFolders are the folders the node's programs create, at fixed paths some of them.
var nodeFolders = []string{
	nodeRunDir, filepath.Dir(shimSocketDir), kubeletRootDir(), "/var/lib/kubelet", "/var/log/containers", "/var/log/pods",
	"/var/lib/cni", "/etc/cni", "/opt/cni", "/opt/containerd", "/var/lib/containerd",
}

// ourChains are the prefixes of the iptables chains the node's programs make: kube-proxy's and
// the kubelet's (KUBE-), the CNI plugins' (CNI-) and this package's (KUBETRAIN-).
var ourChains = []string{"KUBE-", "CNI-", "KUBETRAIN-"}

// isolateChain drops what a pod sends to anywhere but the pods' bridge (after kube-proxy's
// DNAT a Service address is a pod's): no packet from a test's pod leaves this machine.
const isolateChain = "KUBETRAIN-ISOLATE"

func prepareMachine(log io.Writer) error {
	// Leftovers of a run that was killed before it could stop are removed first.
	if err := restoreMachine(); err != nil {
		_, _ = fmt.Fprintf(log, "cleaning up after an earlier real node: %v\n", err)
	}
	if err := recordMachine(); err != nil {
		return err
	}
	for key, value := range nodeSysctls {
		if value == "" {
			continue
		}
		if err := writeSysctl(key, value); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"link", "add", nodeBridge, "type", "bridge"},
		{"addr", "add", nodeIP + "/24", "dev", nodeBridge},
		{"link", "set", nodeBridge, "up"},
	} {
		if err := command("ip", args...); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"-N", isolateChain},
		{"-A", isolateChain, "-i", nodeBridge, "!", "-o", nodeBridge, "-j", "DROP"},
		{"-I", "FORWARD", "1", "-j", isolateChain},
	} {
		if err := command("iptables", append([]string{"-w", "-t", "filter"}, args...)...); err != nil {
			return err
		}
	}
	return nil
}

func recordMachine() error {
	if _, err := os.Stat(machineStateFile); err == nil {
		return nil
	}
	st := machineState{Sysctls: map[string]string{}}
	for key := range nodeSysctls {
		v, err := readSysctl(key)
		if err != nil {
			return err
		}
		st.Sysctls[key] = v
	}
	for _, dir := range nodeFolders {
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			st.Absent = append(st.Absent, dir)
		}
	}
	st.NFTables = nftTables()
	st.Chains = map[string][]string{}
	for _, tool := range chainTools {
		st.Chains[tool] = nodeChainNames(tool)
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(nodeDataDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(machineStateFile, data, 0o644)
}

// restoreMachine undoes everything the real node did, whatever state it was left in: it kills
// what runs in the pods' cgroups and the node's containerd's shims, unmounts what is under its
// own folders, removes the cgroups, the bridge, the chains it made, the new nftables tables and
// folders, and restores the sysctls. Each step runs even if one before failed. What another
// runtime on the machine made (its shims, mounts and chains) is left alone.
func restoreMachine() error {
	var errs []error
	errs = append(errs, killContainers())
	errs = append(errs, host.UnmountUnder(containerdStateDir, kubeletRootDir(), nodeRunDir, filepath.Join(nodeDataDir, "containerd")))
	errs = append(errs, removeCgroups("kubepods"))
	if _, err := os.Stat("/sys/class/net/" + nodeBridge); err == nil {
		errs = append(errs, command("ip", "link", "del", nodeBridge))
	}
	// The machine as it was is recorded before the node changes anything: without the record,
	// the node made no chain, table or folder.
	data, err := os.ReadFile(machineStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return errors.Join(errs...)
	}
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	var st machineState
	if err := json.Unmarshal(data, &st); err != nil {
		return errors.Join(append(errs, fmt.Errorf("reading %s: %w", machineStateFile, err))...)
	}
	for _, tool := range chainTools {
		errs = append(errs, removeChains(tool, st.Chains[tool]))
	}
	errs = append(errs, removeNewTables(st.NFTables))
	for key, value := range st.Sysctls {
		errs = append(errs, writeSysctl(key, value))
	}
	for _, dir := range st.Absent {
		errs = append(errs, os.RemoveAll(dir))
	}
	// The kubelet's root goes each time; the containerd store stays (the loaded images).
	errs = append(errs, os.RemoveAll(kubeletRootDir()), os.RemoveAll(nodeRunDir))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.Remove(machineStateFile)
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

func readSysctl(key string) (string, error) {
	data, err := os.ReadFile(sysctlPath(key))
	return strings.TrimSpace(string(data)), err
}

func writeSysctl(key, value string) error {
	if err := os.WriteFile(sysctlPath(key), []byte(value), 0o644); err != nil {
		return fmt.Errorf("setting %s=%s: %w", key, value, err)
	}
	return nil
}

// command runs a program and returns its output in the error when it fails.
func command(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
