package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests in this file drive the terraform CLI (or TF_ACC_TERRAFORM_PATH) directly, with the
// provider built as a binary of its own, because they do what terraform-plugin-testing cannot:
// send signals to terraform and the provider process, and read TF_LOG=TRACE output.

var providerBinary struct {
	once sync.Once
	dir  string
	err  error
}

// buildProvider builds the provider once per test binary, into a folder a dev_overrides CLI
// config points at.
func buildProvider(t *testing.T) string {
	t.Helper()
	providerBinary.once.Do(func() {
		// Shared by every test of the binary, so it outlives each; TestMain removes it.
		providerBinary.dir, providerBinary.err = os.MkdirTemp("", "tf-acc-provider-") //nolint:usetesting
		if providerBinary.err != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(providerBinary.dir, "terraform-provider-training"), "../..").CombinedOutput()
		if err != nil {
			providerBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if providerBinary.err != nil {
		t.Fatal(providerBinary.err)
	}
	return providerBinary.dir
}

// workspace is a Terraform working directory using the built provider through dev_overrides.
type workspace struct {
	t   *testing.T
	dir string
	env []string
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	bin := buildProvider(t)
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, ".terraformrc")
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"kubetrain/training\" = %q\n  }\n  direct {}\n}\n", bin)
	if err := os.WriteFile(cliConfig, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	return &workspace{t: t, dir: dir, env: env}
}

func terraformCLI() string {
	if path := os.Getenv("TF_ACC_TERRAFORM_PATH"); path != "" {
		return path
	}
	return "terraform"
}

// write sets the configuration.
func (w *workspace) write(config string) {
	w.t.Helper()
	config = "terraform {\n  required_providers {\n    training = { source = \"kubetrain/training\" }\n  }\n}\n" + config
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(config), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// command is terraform with args in the workspace, in a process group of its own so that a
// signal can reach terraform and the provider it started, as a terminal's Ctrl-C does.
func (w *workspace) command(extraEnv []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(terraformCLI(), append(args, "-no-color")...)
	cmd.Dir = w.dir
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, &out
}

// run runs terraform and fails the test if it fails.
func (w *workspace) run(args ...string) string {
	w.t.Helper()
	out, err := w.try(nil, args...)
	if err != nil {
		w.t.Fatalf("terraform %v: %v\n%s", args, err, out)
	}
	return out
}

// try runs terraform and returns its output and error.
func (w *workspace) try(extraEnv []string, args ...string) (string, error) {
	cmd, out := w.command(extraEnv, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return out.String(), fmt.Errorf("terraform %v did not finish in 5 minutes (%v)", args, <-done)
	}
}

// planIsEmpty checks that a plan finds nothing to change: the state matches the cluster.
func (w *workspace) planIsEmpty(args ...string) {
	w.t.Helper()
	out, err := w.try(nil, append([]string{"plan", "-detailed-exitcode", "-input=false"}, args...)...)
	if err != nil {
		w.t.Fatalf("the plan after convergence is not empty (%v):\n%s", err, out)
	}
}

// convergeAndDestroy applies, checks the elastic job in the API and that the plan is then empty,
// destroys, and checks that nothing of the job is left.
func (w *workspace) convergeAndDestroy(a *api, name string, workers int) {
	w.t.Helper()
	w.run("apply", "-auto-approve", "-input=false")
	checkElasticJob(w.t, a, name, workers)
	w.planIsEmpty()
	w.run("destroy", "-auto-approve", "-input=false")
	if err := checkNothingLeft(a, name)(nil); err != nil {
		w.t.Error(err)
	}
}

// mpiJobBlock is a one-worker MPI job resource with extra attributes.
func mpiJobBlock(label, name, extra string) string {
	return fmt.Sprintf(`
resource "training_mpi_job" %q {
  name         = %q
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "python", "/train.py"]
  worker_count = 1
%s}
`, label, name, extra)
}

// exitCode is the exit code of a command that ran and failed (err from try), 0 for none, -1
// for a command that did not run to its end.
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}

// background is a terraform command running in the background (start).
type background struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan error
	err  error
	over bool
}

// start runs terraform with args in the workspace in the background.
func (w *workspace) start(args ...string) *background {
	w.t.Helper()
	cmd, out := w.command(nil, args...)
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	b := &background{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { b.done <- cmd.Wait() }()
	return b
}

// ended says, within limit, whether the command has ended; err is what it ended with.
func (b *background) ended(limit time.Duration) (bool, error) {
	if !b.over {
		select {
		case b.err = <-b.done:
			b.over = true
		case <-time.After(limit):
		}
	}
	return b.over, b.err
}

// wait waits up to limit for the command to end and returns its error; past limit it kills
// terraform and the provider, and fails the test saying what did not end.
func (b *background) wait(t *testing.T, limit time.Duration, what string) error {
	t.Helper()
	if over, err := b.ended(limit); over {
		return err
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	t.Fatalf("%s did not end within %s:\n%s", what, limit, b.out)
	return nil
}
