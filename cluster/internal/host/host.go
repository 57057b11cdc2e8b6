// Package host holds what the local cluster's parts share about this machine and this
// repository: a file lock, a free port, unmounting, and the modules the components require.
package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

func LockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// ModuleDir returns the folder where the Go module cache holds module path at the version the
// component module in moduleDir requires, for files the module ships beside its code (CRD
// manifests).
func ModuleDir(ctx context.Context, moduleDir, path string) (string, error) {
	dir, err := listModule(ctx, moduleDir, path, "{{.Dir}}")
	if err != nil {
		return "", fmt.Errorf("locating module %s for %s: %w", path, moduleDir, err)
	}
	if dir == "" {
		cmd := exec.CommandContext(ctx, "go", "mod", "download", path)
		cmd.Dir = moduleDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("downloading module %s: %w\n%s", path, err, out)
		}
		return ModuleDir(ctx, moduleDir, path)
	}
	return dir, nil
}

// ModuleVersion returns the version of module path the component module in moduleDir requires.
func ModuleVersion(ctx context.Context, moduleDir, path string) (string, error) {
	v, err := listModule(ctx, moduleDir, path, "{{.Version}}")
	if err != nil {
		return "", fmt.Errorf("reading the version of %s for %s: %w", path, moduleDir, err)
	}
	return v, nil
}

// listModule is `go list -m -f format path` in the module in moduleDir.
func listModule(ctx context.Context, moduleDir, path, format string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", format, path)
	cmd.Dir = moduleDir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// FreePort is a free TCP port on 127.0.0.1 for a component to listen on. A port the kernel
// hands out for ":0" comes from its ephemeral range, from which any process's outgoing
// connection may take it between this pick and the component's bind (a component then failed
// with "address already in use"); so it is taken below that range, at random, and reserved for
// this process's life by a lock file, so that clusters starting side by side (the cluster's
// packages test in parallel) never pick the same one.
func FreePort() (int, error) {
	low, err := ephemeralStart()
	if err != nil {
		return 0, err
	}
	const first = 10000 // above the well-known and most registered services' ports
	if low <= first {
		return 0, fmt.Errorf("the ephemeral port range starts at %d, leaving no room below it", low)
	}
	if err := os.MkdirAll(portLockDir(), 0o755); err != nil {
		return 0, err
	}
	for range 1000 {
		port := first + rand.IntN(low-first)
		if free(port) {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port between %d and %d after 1000 tries", first, low)
}

// reserved are the lock files of the ports this process holds: they stay open (and locked) until
// it exits.
var reserved = struct {
	sync.Mutex
	files map[int]*os.File
}{files: map[int]*os.File{}}

// free reserves port for this process if no other process has and nothing listens on it.
func free(port int) bool {
	reserved.Lock()
	defer reserved.Unlock()
	if reserved.files[port] != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(portLockDir(), strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		_ = f.Close()
		return false
	}
	_ = l.Close()
	reserved.files[port] = f
	return true
}

// portLockDir holds the ports' lock files, shared by every process of the machine.
func portLockDir() string { return filepath.Join(os.TempDir(), "training-cluster-ports") }

// ephemeralStart is the first port of the kernel's range for outgoing connections.
func ephemeralStart() (int, error) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		return 0, fmt.Errorf("ip_local_port_range: %q", raw)
	}
	return strconv.Atoi(fields[0])
}

// UnmountUnder unmounts every mount at or below the given folders, deepest first.
func UnmountUnder(dirs ...string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		point := unescapeMount(fields[4])
		for _, d := range dirs {
			if point == d || strings.HasPrefix(point, d+"/") {
				points = append(points, point)
				break
			}
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
