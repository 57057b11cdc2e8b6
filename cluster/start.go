package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// starter carries what the start-up steps share.
type starter struct {
	c    *Cluster
	opts Options
	log  io.Writer
	pki  pki
	// exited receives the name of a process as soon as it exits, so waits fail fast.
	exited chan string
}

// componentDir is the folder of the module that builds component at the cluster's generation.
func (s *starter) componentDir(component string) string {
	return ComponentDir(s.opts.SourceDir, s.c.Generation, component)
}

// run starts one component in the background with its output in its log file.
func (s *starter) run(name, dir string, args ...string) error {
	return s.runEnv(name, dir, nil, args...)
}

// runEnv is run with extra environment variables.
func (s *starter) runEnv(name, dir string, env []string, args ...string) error {
	logFile, err := os.Create(s.c.LogPath(name))
	if err != nil {
		return err
	}
	// The child has its own descriptor; this one is closed once it has started.
	defer func() { _ = logFile.Close() }()
	cmd := exec.Command(s.c.Binaries[name], args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(append(os.Environ(), "HOME="+s.c.RunDir), env...) // KWOK and the operators read ~/.kube, ~/.kwok
	// Own process group: a Ctrl-C on `make cluster` must not reach a cluster meant to outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.opts.DieWithParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	s.c.Processes[name] = cmd.Process.Pid
	// Recorded at once, so that `down` can stop it even if start-up dies half-way.
	if err := s.c.save(); err != nil {
		return err
	}
	if s.exited == nil {
		s.exited = make(chan string, len(binaries)+1) // containerd besides the binaries built here
	}
	go func() {
		_ = cmd.Wait()
		s.exited <- name
	}()
	_, _ = fmt.Fprintf(s.log, "started %s (pid %d)\n", name, cmd.Process.Pid)
	return nil
}

// waitFor polls check until it returns true, failing fast when any started process exits.
func (s *starter) waitFor(ctx context.Context, what string, timeout time.Duration, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	var lastErr error
	for {
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case name := <-s.exited:
			return fmt.Errorf("%s exited while waiting for %s; last lines of %s:\n%s", name, what, s.c.LogPath(name), tail(s.c.LogPath(name), 25))
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), lastErr)
		case <-ticker.C:
		}
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

func (s *starter) startEtcd(ctx context.Context) error {
	client := "http://127.0.0.1:" + strconv.Itoa(s.c.Ports["etcd"])
	peer := "http://127.0.0.1:" + strconv.Itoa(s.c.Ports["etcd-peer"])
	if err := s.run("etcd", s.c.RunDir,
		"--name=local",
		"--data-dir="+filepath.Join(s.c.RunDir, "etcd"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=local="+peer,
		// Test data is thrown away with the cluster: durability buys nothing but fsync waits.
		"--unsafe-no-fsync",
		"--log-level=warn",
	); err != nil {
		return err
	}
	return s.waitFor(ctx, "etcd", 30*time.Second, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, client+"/health")
	})
}

func (s *starter) startAPIServer(ctx context.Context) error {
	p := s.pki
	if err := s.run("kube-apiserver", s.c.RunDir,
		"--etcd-servers=http://127.0.0.1:"+strconv.Itoa(s.c.Ports["etcd"]),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(s.c.Ports["kube-apiserver"]),
		"--tls-cert-file="+p.servingCert(), "--tls-private-key-file="+p.servingKey(),
		"--client-ca-file="+p.caCert(),
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file="+p.saPublicKey(),
		"--service-account-signing-key-file="+p.saPrivateKey(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		// Only allocated in etcd: nothing routes to Service IPs on this cluster.
		"--service-cluster-ip-range=10.96.0.0/16",
		// The "kubernetes" Service would point at 127.0.0.1, which is never reachable from a pod.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--profiling=false",
		// The real node's name resolves nowhere; its address does (logs, exec).
		"--kubelet-preferred-address-types=InternalIP,Hostname",
	); err != nil {
		return err
	}
	client, err := newClients(s.c.Kubeconfig)
	if err != nil {
		return err
	}
	return s.waitFor(ctx, "kube-apiserver to be ready", 60*time.Second, func(ctx context.Context) (bool, error) {
		_, err := client.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, err
	})
}

func (s *starter) startControllers() error {
	p := s.pki
	kubeconfig := "--kubeconfig=" + s.c.Kubeconfig
	steps := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", append([]string{kubeconfig,
			"--authentication-kubeconfig=" + s.c.Kubeconfig, "--authorization-kubeconfig=" + s.c.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.c.Ports["kube-controller-manager"]),
			"--leader-elect=false",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file=" + p.saPrivateKey(),
			"--root-ca-file=" + p.caCert(),
		}, s.opts.ControllerManagerArgs...)},
		{"kube-scheduler", []string{kubeconfig,
			"--authentication-kubeconfig=" + s.c.Kubeconfig, "--authorization-kubeconfig=" + s.c.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.c.Ports["kube-scheduler"]),
			"--leader-elect=false",
		}},
		{"kwok", []string{kubeconfig,
			"--config=" + filepath.Join(s.opts.SourceDir, "kwok-stages.yaml"),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--server-address=",
			// Heartbeat as a kubelet does: a node Lease renewed every quarter of its 40 s
			// duration. Without the flag, kwok v0.7.0 renews no Lease and (choosing its
			// default node stages by the inverted test `lease == 0`) updates node status only
			// every 10 to 20 minutes, so the controller-manager's 50 s grace period ran out
			// about once a minute and every node was tainted unreachable until kwok marked it
			// Ready again.
			"--node-lease-duration-seconds=40",
		}},
		{"mpi-operator", append([]string{kubeconfig}, s.opts.MPIOperatorArgs...)},
		{"training-operator", []string{kubeconfig,
			"--webhook-port=" + strconv.Itoa(s.c.Ports["training-operator-webhook"]),
			"--cert-dir=" + p.webhookCertDir(),
			"--pytorch-init-container-template-file=" + filepath.Join(s.opts.SourceDir, "pytorch-init-container.yaml"),
		}},
	}
	kueueConfig, err := s.writeKueueConfig()
	if err != nil {
		return err
	}
	steps = append(steps, struct {
		name string
		args []string
	}{"kueue", []string{kubeconfig, "--config=" + kueueConfig}})
	jobsetConfig, err := s.writeJobSetConfig()
	if err != nil {
		return err
	}
	steps = append(steps, struct {
		name string
		args []string
	}{"jobset", []string{kubeconfig, "--config=" + jobsetConfig, "--metrics-bind-address=0", "--health-probe-bind-address=0"}},
		struct {
			name string
			args []string
		}{"trainer", []string{kubeconfig, "--webhook-port=" + strconv.Itoa(s.c.Ports["trainer-webhook"]), "--cert-dir=" + p.webhookCertDir()}},
		struct {
			name string
			args []string
		}{"provisioner", []string{kubeconfig}})
	operators := map[string]bool{"mpi-operator": true, "training-operator": true, "kueue": true, "jobset": true, "trainer": true, "provisioner": true}
	for _, st := range steps {
		if s.opts.SkipOperators && operators[st.name] {
			continue
		}
		if err := s.run(st.name, s.c.RunDir, st.args...); err != nil {
			return err
		}
	}
	if s.opts.SkipOperators {
		return nil
	}
	// frameworkcontroller reads ./frameworkcontroller.yaml from its working folder.
	fcDir := filepath.Join(s.c.RunDir, "frameworkcontroller")
	if err := os.MkdirAll(fcDir, 0o755); err != nil {
		return err
	}
	fcConfig := fmt.Sprintf("kubeConfigFilePath: %q\n", s.c.Kubeconfig)
	if err := os.WriteFile(filepath.Join(fcDir, "frameworkcontroller.yaml"), []byte(fcConfig), 0o644); err != nil {
		return err
	}
	return s.run("frameworkcontroller", fcDir)
}

// reportOperators says which operator releases run, and Kueue's integrations.
func (s *starter) reportOperators(ctx context.Context) {
	var running []string
	for _, m := range operatorModules {
		v, err := host.ModuleVersion(ctx, s.componentDir(m.component), m.module)
		if err != nil {
			v = "(version unknown: " + err.Error() + ")"
		}
		running = append(running, m.component+" "+v)
	}
	_, _ = fmt.Fprintf(s.log, "operators: %s\nKueue integrations: %s\n", strings.Join(running, ", "), strings.Join(s.kueueFrameworks(), ", "))
}
