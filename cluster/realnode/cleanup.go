package realnode

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// killContainers kills every process in the pods' cgroups and every shim of the node's
// containerd, waits until they are gone, and removes the sockets those shims served.
func killContainers() error {
	deadline := time.Now().Add(20 * time.Second)
	sockets := map[string]bool{}
	for {
		pids := cgroupProcs("kubepods")
		for _, s := range nodeShims() {
			pids = append(pids, s.pid)
			sockets[s.socket] = true
		}
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of the real node still running after 20 s: %v", pids)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var errs []error
	for s := range sockets {
		if err := os.Remove(s); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cgroupProcs are the processes in the cgroup tree named name under every v1 hierarchy (and the
// unified one).
func cgroupProcs(name string) []int {
	seen := map[int]bool{}
	for _, root := range cgroupRoots(name) {
		// A cgroup removed while the tree is walked is skipped: its processes are gone too.
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, walkErr error) error {
			if walkErr != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil //nolint:nilerr // skipped, see above
			}
			data, readErr := os.ReadFile(path)
			if readErr != nil {
				return nil //nolint:nilerr // skipped, see above
			}
			for _, f := range strings.Fields(string(data)) {
				var pid int
				if _, err := fmt.Sscan(f, &pid); err == nil && pid > 0 {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	var pids []int
	for pid := range seen {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids
}

func cgroupRoots(name string) []string {
	entries, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return nil
	}
	var roots []string
	for _, e := range entries {
		if root := filepath.Join("/sys/fs/cgroup", e.Name(), name); isDir(root) {
			roots = append(roots, root)
		}
	}
	if root := filepath.Join("/sys/fs/cgroup", name); isDir(root) {
		roots = append(roots, root)
	}
	return roots
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// nodeShim is a runc shim of the node's containerd and the socket it serves.
type nodeShim struct {
	pid    int
	socket string
}

// nodeShims are the runc shims serving the node's containerd (those of another containerd on
// the machine name another address), each with its socket, which containerd 1.6 places in
// shimSocketDir, named by the hash of its containerd's address, namespace and id.
func nodeShims() []nodeShim {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var shims []nodeShim
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if s, ok := shimOf(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")); ok {
			s.pid = pid
			shims = append(shims, s)
		}
	}
	return shims
}

// shimOf reads a process's arguments as a runc shim's of the node's containerd.
func shimOf(args []string) (nodeShim, bool) {
	if len(args) == 0 || !strings.HasSuffix(args[0], "containerd-shim-runc-v2") {
		return nodeShim{}, false
	}
	flags := map[string]string{}
	for i := 1; i+1 < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			flags[strings.TrimLeft(args[i], "-")] = args[i+1]
		}
	}
	if flags["address"] != containerdSocket {
		return nodeShim{}, false
	}
	sum := sha256.Sum256([]byte(filepath.Join(flags["address"], flags["namespace"], flags["id"])))
	return nodeShim{socket: filepath.Join(shimSocketDir, fmt.Sprintf("%x", sum))}, true
}

// removeCgroups removes the cgroup tree named name in every hierarchy, deepest first.
func removeCgroups(name string) error {
	var errs []error
	for _, root := range cgroupRoots(name) {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// chainTables are the iptables tables the node's programs make chains in.
var chainTables = []string{"filter", "nat", "mangle", "raw"}

// nodeChainNames are the chains of the node's prefixes (ourChains) that tool lists now, as
// "TABLE CHAIN".
func nodeChainNames(tool string) []string {
	var names []string
	for _, table := range chainTables {
		out, err := exec.Command(tool, "-w", "-t", table, "-S").Output()
		if err != nil {
			continue // the table does not exist in this family
		}
		for _, line := range strings.Split(string(out), "\n") {
			if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "-N" && hasOurPrefix(fields[1]) {
				names = append(names, table+" "+fields[1])
			}
		}
	}
	return names
}

// removeChains deletes, in every table, the rules that are in or jump to the node's chains, then
// the chains themselves. The node's are those of its prefixes that were not there before it
// (before, as nodeChainNames listed them then): a kubelet, kube-proxy or CNI plugin of another
// runtime on the machine makes chains of the same prefixes, and they are left alone.
func removeChains(tool string, before []string) error {
	existed := map[string]bool{}
	for _, c := range before {
		existed[c] = true
	}
	var errs []error
	for _, table := range chainTables {
		out, err := exec.Command(tool, "-w", "-t", table, "-S").Output()
		if err != nil {
			continue // the table does not exist in this family
		}
		ours := func(chain string) bool { return hasOurPrefix(chain) && !existed[table+" "+chain] }
		var chains []string
		for _, line := range strings.Split(string(out), "\n") {
			fields := strings.Fields(line)
			switch {
			case len(fields) >= 2 && fields[0] == "-N" && ours(fields[1]):
				chains = append(chains, fields[1])
			case len(fields) >= 2 && fields[0] == "-A" && !ours(fields[1]) && jumpsTo(fields, ours):
				// A rule of a built-in chain that jumps to ours: -A becomes -D.
				errs = append(errs, command(tool, append([]string{"-w", "-t", table, "-D"}, unquoteRule(fields[1:])...)...))
			}
		}
		for _, c := range chains {
			errs = append(errs, command(tool, "-w", "-t", table, "-F", c))
		}
		for _, c := range chains {
			errs = append(errs, command(tool, "-w", "-t", table, "-X", c))
		}
	}
	return errors.Join(errs...)
}

func hasOurPrefix(chain string) bool {
	for _, p := range ourChains {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// jumpsTo says whether a rule jumps or goes to a chain target says.
func jumpsTo(fields []string, target func(string) bool) bool {
	for i := 0; i+1 < len(fields); i++ {
		if (fields[i] == "-j" || fields[i] == "-g") && target(fields[i+1]) {
			return true
		}
	}
	return false
}

// unquoteRule removes the double quotes iptables -S puts around comments with spaces, joining
// the words they held back into one argument.
func unquoteRule(fields []string) []string {
	var out []string
	for i := 0; i < len(fields); i++ {
		if !strings.HasPrefix(fields[i], `"`) {
			out = append(out, fields[i])
			continue
		}
		quoted := fields[i]
		for (len(quoted) < 2 || !strings.HasSuffix(quoted, `"`)) && i+1 < len(fields) {
			i++
			quoted += " " + fields[i]
		}
		out = append(out, strings.Trim(quoted, `"`))
	}
	return out
}

// nftTables lists the nftables tables ("family name"); nil when nft is not installed.
func nftTables() []string {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			tables = append(tables, rest)
		}
	}
	return tables
}

// removeNewTables deletes the nftables tables that did not exist before the node and hold no
// rule now (iptables-nft leaves the tables it made, empty, behind).
func removeNewTables(before []string) error {
	existed := map[string]bool{}
	for _, t := range before {
		existed[t] = true
	}
	var errs []error
	for _, t := range nftTables() {
		if existed[t] {
			continue
		}
		out, err := exec.Command("nft", append([]string{"list", "table"}, strings.Fields(t)...)...).Output()
		if err != nil || tableHasRules(string(out)) {
			continue
		}
		errs = append(errs, command("nft", append([]string{"delete", "table"}, strings.Fields(t)...)...))
	}
	return errors.Join(errs...)
}

func tableHasRules(listing string) bool {
	for _, line := range strings.Split(listing, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || l == "}" || strings.HasPrefix(l, "table ") || strings.HasPrefix(l, "chain ") || strings.HasPrefix(l, "type ") {
			continue
		}
		return true
	}
	return false
}
