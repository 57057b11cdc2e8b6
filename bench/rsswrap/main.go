// Command rsswrap stands in for a provider binary in a benchmark's dev_overrides folder: it runs
// the real provider (named by BENCH_REAL_<NAME>, NAME from its own file name) with the same
// arguments, standard streams and environment, so Terraform's plugin handshake goes through
// unchanged, and appends the provider's peak resident memory (KiB, from rusage) to the file
// named by BENCH_RSS_LOG when it exits.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	name := strings.ToUpper(strings.TrimPrefix(filepath.Base(os.Args[0]), "terraform-provider-"))
	binary := os.Getenv("BENCH_REAL_" + name)
	if binary == "" {
		fmt.Fprintf(os.Stderr, "rsswrap: BENCH_REAL_%s is not set\n", name)
		os.Exit(1)
	}
	cmd := exec.Command(binary, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "rsswrap:", err)
		os.Exit(1)
	}
	if usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		if f, err := os.OpenFile(os.Getenv("BENCH_RSS_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			_, _ = fmt.Fprintf(f, "%s %d\n", name, usage.Maxrss)
			_ = f.Close()
		}
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
