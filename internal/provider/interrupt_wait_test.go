package provider

import (
	"encoding/json"
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// Terraform stopped during a create's wait (Ctrl-C, a CI runner's limit, a cancelled pipeline:
// SIGINT to the CLI, which cancels the provider's requests) is not the job's failure: a job
// queued in Kueue and one whose pods are starting both stay in state, untainted, the apply warns
// that the wait was interrupted and what each job was doing, and the next plan is empty.
func TestAccInterruptedWaitLeavesTheJobsUntainted(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	prefix := acctest.RandomWithPrefix("tf-acc-int")
	holder, queued, starting := prefix+"-a", prefix+"-b", prefix+"-c"
	w := newWorkspace(t)
	// The first job takes the queue's 2 GPUs, so the second stays queued; the third tolerates no
	// taint, and every node of the cluster has one, so its pods stay Pending. Both wait for
	// running with the default timeout: only the interrupt ends their waits.
	w.write(quotaConfig(prefix, 2, queuedJob(jobs.MPI, "a", holder, "  wait_for = \"admitted\"\n")+
		queuedJob(jobs.MPI, "b", queued, "  depends_on = [training_mpi_job.a]\n")+
		fmt.Sprintf(`
resource "training_mpi_job" "c" {
  name         = %q
  image        = "registry.example/train:1"
  command      = ["mpirun", "hostname"]
  worker_count = 1
}
`, starting)))
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		for _, name := range []string{holder, queued, starting} {
			if err := jobGone(a, jobs.MPI, "default", name); err != nil {
				t.Error(err)
			}
		}
	})

	cmd, out := w.command(nil, "apply", "-auto-approve", "-input=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Interrupted once both waits are under way: the queued job suspended by Kueue, the other's
	// pods made and Pending.
	waiting := func() bool {
		if err := checkSuspended(a, jobs.MPI, queued, true)(nil); err != nil || a.workloadOf(jobs.MPI, queued) == nil {
			return false
		}
		pods := a.pods("default", jobs.MPI.PodSelector(starting))
		return len(pods) == 2 && pods[0].Status.Phase == corev1.PodPending && pods[1].Status.Phase == corev1.PodPending
	}
	deadline := time.Now().Add(3 * time.Minute)
	for !waiting() {
		select {
		case err := <-done:
			t.Fatalf("terraform apply ended (%v) before both waits were under way:\n%s", err, out)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the queued job and the starting job were not both waited on within 3 minutes:\n%s", out)
		}
	}
	// Ctrl-C: the terminal signals terraform's whole process group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("terraform apply did not stop within 2 minutes of SIGINT:\n%s", out)
	}
	for _, want := range []string{
		`Warning: MPIJob default/` + queued + ` is not running yet \(create\); the wait was interrupted.*` +
			`The wait was interrupted \(Terraform was stopped\) after .*quota.* not tainted`,
		`Warning: MPIJob default/` + starting + ` is not running yet \(create\); the wait was interrupted.*` +
			`The wait was interrupted \(Terraform was stopped\) after .*untolerated taint.* not tainted`,
	} {
		if !wrapped(want).MatchString(out.String()) {
			t.Errorf("the interrupted apply's output does not match %s:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`Error: (Error )?waiting for`).MatchString(out.String()) {
		t.Errorf("the interrupted wait was reported as an error:\n%s", out)
	}

	// In state, untainted, as Kueue and the scheduler left them.
	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Tainted bool           `json:"tainted"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(w.run("show", "-json")), &state); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"training_mpi_job.b": jobs.Queued, "training_mpi_job.c": jobs.Pending}
	for _, r := range state.Values.RootModule.Resources {
		status, ok := want[r.Address]
		if !ok {
			continue
		}
		delete(want, r.Address)
		if r.Tainted {
			t.Errorf("%s is tainted after the interrupted wait", r.Address)
		}
		if got := r.Values["status"]; got != status {
			t.Errorf("%s has status %v in state, want %s", r.Address, got, status)
		}
	}
	if len(want) > 0 {
		t.Errorf("not in state after the interrupted apply: %v", want)
	}
	w.planIsEmpty()
}
