package provider

import (
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

	apply := w.start("apply", "-auto-approve", "-input=false")
	// Interrupted once both waits are under way: the queued job suspended by Kueue, the other's
	// pods made and Pending.
	waiting := func() bool {
		if err := checkSuspended(a, jobs.MPI, queued, true)(nil); err != nil || a.workloadOf(jobs.MPI, queued) == nil {
			return false
		}
		pods := a.pods("default", jobs.MPI.PodSelector(starting))
		return len(pods) == 2 && pods[0].Status.Phase == corev1.PodPending && pods[1].Status.Phase == corev1.PodPending
	}
	for deadline := time.Now().Add(3 * time.Minute); !waiting(); {
		if over, err := apply.ended(200 * time.Millisecond); over {
			t.Fatalf("terraform apply ended (%v) before both waits were under way:\n%s", err, apply.out)
		}
		if time.Now().After(deadline) {
			_ = apply.wait(t, 0, "the apply whose waits never both began")
		}
	}
	// Ctrl-C: the terminal signals terraform's whole process group.
	if err := syscall.Kill(-apply.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = apply.wait(t, 2*time.Minute, "terraform apply, after SIGINT,")
	out := apply.out
	for _, want := range []string{
		`Warning: MPIJob default/` + queued + ` is not running yet \(create\); the wait was interrupted.*` +
			`The wait was interrupted \(Terraform was stopped\) after .*not admitted by Kueue.* not tainted`,
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
	want := map[string]string{"training_mpi_job.b": jobs.Queued, "training_mpi_job.c": jobs.Pending}
	for _, r := range shownResources(t, w) {
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
