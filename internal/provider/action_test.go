package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// actionTest sets an action's acceptance test up: the cluster's API, a CLI that has actions, and
// the nodes' taints held as they are while it runs beside the others.
func actionTest(t *testing.T) *api {
	t.Helper()
	a := newAPI(t)
	requireCLI(t, "1.14.0", "actions")
	t.Parallel()
	nodeTaintsMu.RLock()
	t.Cleanup(nodeTaintsMu.RUnlock)
	return a
}

// podUIDs are the UIDs of the job's pods now.
func (a *api) podUIDs(kind *jobs.Kind, name string) sets.Set[string] {
	a.t.Helper()
	pods, err := a.kube.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: kind.PodSelector(name)})
	if err != nil {
		a.t.Fatal(err)
	}
	uids := sets.New[string]()
	for _, p := range pods.Items {
		uids.Insert(string(p.UID))
	}
	return uids
}

// The restart action restarts a running MPI job in place: new pods, the same job object (UID),
// and the plan after it is empty. It refuses a job that is gone, changing nothing.
func TestAccAction_restartJobMakesNewPodsOfTheSameJob(t *testing.T) {
	a := actionTest(t)
	name := mpiJobName()
	w := newWorkspace(t)
	job := mpiJobBlock("test", name, "  tolerations = [\"ssd_node\"]\n  min_running_seconds = 0\n")
	w.write(providerConfig() + job + fmt.Sprintf(`
action "training_restart_job" "now" {
  config {
    kind = "mpi"
    name = %q
  }
}

action "training_restart_job" "gone" {
  config {
    kind = "mpi"
    name = "%s-gone"
  }
}
`, name, name))
	w.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false") })
	before, err := a.get(jobs.MPI.GVR, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	pods := a.podUIDs(jobs.MPI, name)
	if pods.Len() != 2 {
		t.Fatalf("%d pods before the restart, want the launcher and a worker", pods.Len())
	}
	out := w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_restart_job.now")
	if !strings.Contains(out, "running again") {
		t.Errorf("the restart does not say the job runs again:\n%s", out)
	}
	after, err := a.get(jobs.MPI.GVR, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != before.GetUID() || jobs.MPI.Suspended(after) {
		t.Errorf("after the restart the job is another (UID %s, was %s) or suspended (%v)", after.GetUID(), before.GetUID(), jobs.MPI.Suspended(after))
	}
	if now := a.podUIDs(jobs.MPI, name); now.Len() != 2 || now.HasAny(pods.UnsortedList()...) {
		t.Errorf("pods %v after the restart, want two new ones (were %v)", now.UnsortedList(), pods.UnsortedList())
	}
	w.planIsEmpty()

	out, err = w.try(nil, "apply", "-auto-approve", "-input=false", "-invoke=action.training_restart_job.gone")
	if err == nil || !strings.Contains(flat(out), "is gone") {
		t.Errorf("a restart of a job that is not there does not fail saying so (%v):\n%s", err, out)
	}
}

// The requeue action sends an admitted job to the back of its queue while two others wait, each
// needing the whole quota: its pods stop, its quota goes to the first that waits, and the job,
// the same object, waits behind the second, which Kueue admits before it once the first is gone
// (kept in its place, the requeued job, older than both, would be admitted first). Once the
// others are gone, the requeued job runs. The job resources' plan is empty after each.
func TestAccAction_requeueJobGoesToTheBackOfItsQueue(t *testing.T) {
	a := actionTest(t)
	prefix := acctest.RandomWithPrefix("tf-acc-requeue")
	first, second, third := prefix+"-a", prefix+"-b", prefix+"-c"
	action := fmt.Sprintf(`
action "training_requeue_job" "first" {
  config {
    kind = "mpi"
    name = %q
  }
}
`, first)
	after := func(address string) string {
		return fmt.Sprintf("  wait_for = \"created\"\n  depends_on = [training_mpi_job.%s]\n", address)
	}
	jobA, jobB, jobC := queuedJob(jobs.MPI, "a", first, ""), queuedJob(jobs.MPI, "b", second, after("a")), queuedJob(jobs.MPI, "c", third, after("b"))
	w := newWorkspace(t)
	w.write(quotaConfig(prefix, 2, jobA+jobB+action))
	w.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false") })
	a.waitWorkloadWaits(second)
	// Kubernetes records creation to the second, and Kueue orders Workloads of one second by
	// UID: the third is made in a later second than the second's Workload.
	a.nextSecondAfter(a.workloadOf(jobs.MPI, second))
	w.write(quotaConfig(prefix, 2, jobA+jobB+jobC+action))
	w.run("apply", "-auto-approve", "-input=false")
	// Kueue may leave the third untried (no QuotaReserved condition) while the second waits ahead
	// of it: its Workload is enough.
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		return a.workloadOf(jobs.MPI, third) != nil, nil
	}); err != nil {
		t.Fatalf("Kueue made no Workload of %s: %v", third, err)
	}
	before, err := a.get(jobs.MPI.GVR, "default", first)
	if err != nil {
		t.Fatal(err)
	}

	out := w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_requeue_job.first")
	if !strings.Contains(flat(out), "at the back of LocalQueue "+prefix) {
		t.Errorf("the requeue does not say the job is at the back of its queue:\n%s", out)
	}
	if got := a.firstAdmitted(jobs.MPI, first, second, third); got != second {
		t.Fatalf("Kueue admitted %s with the quota the requeued job gave back, not %s, the first that waited", got, second)
	}
	now, err := a.get(jobs.MPI.GVR, "default", first)
	if err != nil {
		t.Fatal(err)
	}
	if now.GetUID() != before.GetUID() {
		t.Errorf("the requeued job is another object (UID %s, was %s)", now.GetUID(), before.GetUID())
	}
	w.planIsEmpty()

	// The second gone, the third goes before the requeued job.
	w.write(quotaConfig(prefix, 2, jobA+queuedJob(jobs.MPI, "c", third, "  wait_for = \"created\"\n")+action))
	w.run("apply", "-auto-approve", "-input=false")
	if got := a.firstAdmitted(jobs.MPI, first, third); got != third {
		t.Fatalf("Kueue admitted %s before %s: the requeued job kept its place in the queue", got, third)
	}

	// The others gone, the requeued job is admitted again and runs.
	w.write(quotaConfig(prefix, 2, jobA+action))
	w.run("apply", "-auto-approve", "-input=false")
	if err := waitJobRunning(a, jobs.MPI, first)(nil); err != nil {
		t.Fatalf("the requeued job was not admitted again once the quota was free: %v", err)
	}
	w.planIsEmpty()

	out, err = w.try(nil, "apply", "-auto-approve", "-input=false", "-invoke=action.training_requeue_job.first")
	if err != nil {
		t.Fatalf("a second requeue: %v\n%s", err, out)
	}
}

// nextSecondAfter waits until the clock is past the second obj was created in.
func (a *api) nextSecondAfter(obj *unstructured.Unstructured) {
	a.t.Helper()
	if obj == nil {
		a.t.Fatal("no object to wait past the creation of")
	}
	if wait := time.Until(obj.GetCreationTimestamp().Add(time.Second)); wait > 0 {
		time.Sleep(wait + 100*time.Millisecond)
	}
}

// firstAdmitted waits until Kueue admits one of the MPI jobs named, and says which.
func (a *api) firstAdmitted(kind *jobs.Kind, names ...string) string {
	a.t.Helper()
	var admitted string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		for _, name := range names {
			if wl := a.workloadOf(kind, name); wl != nil && kueue.ReadWorkload(wl).Admitted {
				admitted = name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		a.t.Fatalf("Kueue admitted none of %v: %v", names, err)
	}
	return admitted
}

// The queue actions stop a ClusterQueue's admissions around a job submitted meanwhile, which
// waits, and resume them, which admits it; the queue's stop_policy, left unset, plans no change.
// A LocalQueue that sets stop_policy takes it back at the next apply, and the plan shows it.
func TestAccAction_stopAndResumeAQueueAroundAJobSubmittedBetween(t *testing.T) {
	a := actionTest(t)
	prefix := acctest.RandomWithPrefix("tf-acc-stopq")
	job := prefix + "-a"
	actions := fmt.Sprintf(`
action "training_stop_queue" "team" {
  config {
    cluster_queue = "%[1]s-team"
  }
}

action "training_resume_queue" "team" {
  config {
    cluster_queue = "%[1]s-team"
  }
}

action "training_stop_queue" "local" {
  config {
    local_queue = %[1]q
  }
}
`, prefix)
	w := newWorkspace(t)
	w.write(quotaConfig(prefix, 2, actions))
	w.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false") })
	if out := w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_stop_queue.team"); !strings.Contains(out, "stopped") {
		t.Errorf("the stop does not say the queue is stopped:\n%s", out)
	}
	w.planIsEmpty()

	w.write(quotaConfig(prefix, 2, actions+queuedJob(jobs.MPI, "a", job, "  wait_for = \"created\"\n")))
	w.run("apply", "-auto-approve", "-input=false")
	if obj, err := a.get(jobs.MPI.GVR, "default", job); err != nil || !jobs.MPI.Suspended(obj) {
		t.Fatalf("the job submitted to the stopped queue is not held suspended by Kueue (%v)", err)
	}
	w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_resume_queue.team")
	if err := waitJobRunning(a, jobs.MPI, job)(nil); err != nil {
		t.Fatalf("the job was not admitted once the queue resumed: %v", err)
	}
	w.planIsEmpty()

	// Set in the configuration, the stop policy is Terraform's: the plan sets it back.
	w.write(strings.Replace(quotaConfig(prefix, 2, actions+queuedJob(jobs.MPI, "a", job, "  wait_for = \"created\"\n")),
		"  cluster_queue = training_cluster_queue.team.name\n", "  cluster_queue = training_cluster_queue.team.name\n  stop_policy   = \"None\"\n", 1))
	w.run("apply", "-auto-approve", "-input=false")
	w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_stop_queue.local")
	if plan := w.run("plan", "-input=false"); !strings.Contains(flat(plan), `~ stop_policy = "Hold" -> "None"`) {
		t.Errorf("the plan does not set the LocalQueue's stop policy back:\n%s", plan)
	}
	w.run("apply", "-auto-approve", "-input=false")
	w.planIsEmpty()
}

// The suspend actions hold back and resume a plain MPI job whose suspend is left unset, each
// waiting until it took effect (no pods; running again), with empty plans after each. A
// configuration that sets suspend = false takes the job back at the next apply, and the plan
// shows it.
func TestAccAction_suspendAndResumeAJobWhoseSuspendIsUnset(t *testing.T) {
	a := actionTest(t)
	name := mpiJobName()
	actions := fmt.Sprintf(`
action "training_suspend_job" "it" {
  config {
    kind = "mpi"
    name = %[1]q
  }
}

action "training_resume_job" "it" {
  config {
    kind = "mpi"
    name = %[1]q
  }
}
`, name)
	job := func(extra string) string {
		return providerConfig() + mpiJobBlock("test", name, "  tolerations = [\"ssd_node\"]\n  min_running_seconds = 0\n"+extra) + actions
	}
	w := newWorkspace(t)
	w.write(job(""))
	w.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false") })

	w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_suspend_job.it")
	obj, err := a.get(jobs.MPI.GVR, "default", name)
	if err != nil || !jobs.MPI.Suspended(obj) || a.podUIDs(jobs.MPI, name).Len() != 0 {
		t.Fatalf("after the suspend action the job is not suspended without pods (%v)", err)
	}
	w.planIsEmpty()
	if out := w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_resume_job.it"); !strings.Contains(out, "running in") {
		t.Errorf("the resume does not say the job runs:\n%s", out)
	}
	if obj, err := a.get(jobs.MPI.GVR, "default", name); err != nil || jobs.MPI.Suspended(obj) || a.podUIDs(jobs.MPI, name).Len() != 2 {
		t.Fatalf("after the resume action the job is suspended or without its pods (%v)", err)
	}
	w.planIsEmpty()

	// Set in the configuration, suspend is Terraform's: the plan resumes the job.
	w.write(job("  suspend = false\n"))
	w.run("apply", "-auto-approve", "-input=false")
	w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_suspend_job.it")
	if plan := flat(w.run("plan", "-input=false")); !strings.Contains(plan, "~ suspend = true -> false") {
		t.Errorf("the plan does not resume the job its configuration says runs:\n%s", plan)
	}
	w.run("apply", "-auto-approve", "-input=false")
	w.planIsEmpty()
}
