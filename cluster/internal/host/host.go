// Package host holds what the local cluster's parts share about this machine and this
// repository: a file lock, a free port, unmounting, and the modules the components require.
package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
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
// component requires, for files the module ships beside its code (CRD manifests).
func ModuleDir(ctx context.Context, sourceDir, component, path string) (string, error) {
	dir, err := listModule(ctx, sourceDir, component, path, "{{.Dir}}")
	if err != nil {
		return "", fmt.Errorf("locating module %s for %s: %w", path, component, err)
	}
	if dir == "" {
		cmd := exec.CommandContext(ctx, "go", "mod", "download", path)
		cmd.Dir = filepath.Join(sourceDir, "components", component)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("downloading module %s: %w\n%s", path, err, out)
		}
		return ModuleDir(ctx, sourceDir, component, path)
	}
	return dir, nil
}

// ModuleVersion returns the version of module path the component requires.
func ModuleVersion(ctx context.Context, sourceDir, component, path string) (string, error) {
	v, err := listModule(ctx, sourceDir, component, path, "{{.Version}}")
	if err != nil {
		return "", fmt.Errorf("reading the version of %s for %s: %w", path, component, err)
	}
	return v, nil
}

// listModule is `go list -m -f format path` in the component's module.
func listModule(ctx context.Context, sourceDir, component, path, format string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", format, path)
	cmd.Dir = filepath.Join(sourceDir, "components", component)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("unexpected listener address %v", l.Addr())
	}
	return addr.Port, nil
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
