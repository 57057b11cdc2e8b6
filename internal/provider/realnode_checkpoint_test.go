package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A plain mpirun job whose program saves only when it is told to stop (mpi_checkpoint.py: a save
// of 3 s on SIGTERM), beside the same job without a declared checkpoint, both rescaled from 2 to 3
// workers, which replaces them. The plan says which one resumes; with its checkpoint, the stop
// reaches every rank through mpirun and its daemons and gives the save its time (the workers'
// sshd stays until the ranks are done), so the new run of 3 ranks starts from the step saved at
// the stop; without one, the ranks die with their workers' sshd before any save (Open MPI's
// default gives a rank 1 s after its SIGTERM), and the new run starts from step 0.
func TestAccRealNode_mpiJobWithACheckpointSavesAtItsStopAndItsReplacementResumes(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, dir := a.sharedVolume(t, "ckpt-"+suffix)
	saving, unsaved := "tfacc-ckpt-"+suffix, "tfacc-nockpt-"+suffix
	job := func(resource, name, folder, checkpoint string, workers int) string {
		return fmt.Sprintf(`
resource "training_mpi_job" %[1]q {
  name         = %[2]q
  image        = %[3]q
  command      = ["mpirun", "python3", "%[4]s/mpi_checkpoint.py", "--checkpoint", "/ckpt/%[5]s/state.json", "--save-seconds", "3"]
  worker_count = %[6]d
  data_volumes = ["%[7]s:/ckpt"]
%[8]s%[9]s
}
`, resource, name, node.Images[images.Training], images.ProgramsDir, folder, workers, claim, checkpoint, onRealNode)
	}
	config := func(workers int) string {
		return providerConfig() +
			job("saving", saving, "saving", `  checkpoint = { path = "/ckpt/saving", save_seconds = 5 }`, workers) +
			job("unsaved", unsaved, "unsaved", "", workers)
	}
	stepped := func(name string, from int) int { return mpiStepped(t, a, name, from) }
	started := func(name string, workers int) event { return mpiStarted(t, a, name, workers) }

	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.MPI, saving, unsaved)
	})
	w.write(config(2))
	w.run("apply", "-auto-approve", "-input=false")
	started(saving, 2)
	started(unsaved, 2)
	before := stepped(saving, 0)
	stepped(unsaved, 0)

	w.write(config(3))
	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []string{
		"Replacing running job default/" + saving + ": its training stops to resume from its checkpoint",
		"given 20 seconds to save to /ckpt/saving (claim " + claim + ")",
		"Its ranks are sent SIGTERM first under Open MPI 4 or 5; under MPICH or Intel MPI they end with their pods",
		"Replacing running job default/" + unsaved + " starts its training from the beginning",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	out := flat(w.run("apply", "-auto-approve", "-input=false"))
	if want := "default/" + saving + " stopped within its grace"; !strings.Contains(out, want) {
		t.Errorf("the apply does not say %q:\n%s", want, out)
	}

	// The job with a checkpoint saved at its stop, with its 2 ranks, at least the step it had
	// reached before the plan; the new run of 3 ranks starts there.
	saved := readSaved(t, filepath.Join(dir, "saving", "state.json"))
	if saved.WorldSize != 2 || saved.Step < before {
		t.Errorf("the checkpoint saved at the stop: step %d of %d ranks; want a step of 2 ranks, at least %d", saved.Step, saved.WorldSize, before)
	}
	if s := started(saving, 3); s.ResumedFrom != saved.Step {
		t.Errorf("the new run of %s resumed from step %d; the stop saved step %d", saving, s.ResumedFrom, saved.Step)
	}
	// The one without saved nothing and starts again from the beginning.
	if _, err := os.Stat(filepath.Join(dir, "unsaved", "state.json")); !os.IsNotExist(err) {
		t.Errorf("the job without a checkpoint saved one at its stop (%v): the test proves nothing", err)
	}
	if s := started(unsaved, 3); s.ResumedFrom != 0 {
		t.Errorf("the new run of %s resumed from step %d; want 0", unsaved, s.ResumedFrom)
	}

	// Destroy stops the new run the same way, and leaves its last checkpoint on the volume.
	after := stepped(saving, saved.Step)
	out = flat(w.run("destroy", "-auto-approve", "-input=false"))
	if want := "default/" + saving + " stopped within its grace"; !strings.Contains(out, want) {
		t.Errorf("the destroy does not say %q:\n%s", want, out)
	}
	if last := readSaved(t, filepath.Join(dir, "saving", "state.json")); last.WorldSize != 3 || last.Step < after {
		t.Errorf("the checkpoint destroy left: step %d of %d ranks; want a step of 3 ranks, at least %d", last.Step, last.WorldSize, after)
	}
}

// mpiLauncher selects the launcher of the MPIJob of that name.
func mpiLauncher(name string) string {
	return jobs.MPI.PodSelector(name) + "," + jobs.JobRoleLabel + "=launcher"
}

// mpiStepped waits for mpi_checkpoint.py in the MPIJob of that name to step 3 past from, and
// returns its last step.
func mpiStepped(t *testing.T, a *api, name string, from int) int {
	events := a.waitEvents(t, mpiLauncher(name), 3*time.Minute, name+" stepping", func(events []event) bool {
		return lastStep(events) >= from+3
	})
	return lastStep(events)
}

// mpiStarted waits for mpi_checkpoint.py's start in the MPIJob of that name, checks that it
// runs one rank on each of its workers, and returns the start.
func mpiStarted(t *testing.T, a *api, name string, workers int) event {
	// The launcher starts with the workers and fails until their names resolve, which they do
	// once the workers are Ready; the kubelet restarts it after 10, 20, 40, 80 then 160 seconds.
	// A worker Ready a minute late (a loaded machine) puts the launcher's start 3 minutes out.
	events := a.waitEvents(t, mpiLauncher(name), 6*time.Minute, name+" starting", func(events []event) bool {
		return len(eventsOf(events, "start")) > 0
	})
	s := eventsOf(events, "start")[0]
	if s.WorldSize != workers || len(s.Hosts) != workers {
		t.Errorf("%s started with %d ranks on hosts %v; want %d, one on each worker", name, s.WorldSize, s.Hosts, workers)
	}
	return s
}

// savedState is what mpi_checkpoint.py saves.
type savedState struct {
	Step      int `json:"step"`
	WorldSize int `json:"world_size"`
}

func readSaved(t *testing.T, file string) savedState {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no checkpoint was saved: %v", err)
	}
	var s savedState
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("the checkpoint %s: %v", data, err)
	}
	return s
}

// eventsOf are the events of that name.
func eventsOf(events []event, name string) []event {
	var out []event
	for _, e := range events {
		if e.Event == name {
			out = append(out, e)
		}
	}
	return out
}

// lastStep is the step of the last step event, 0 before the first.
func lastStep(events []event) int {
	steps := eventsOf(events, "step")
	if len(steps) == 0 {
		return 0
	}
	return steps[len(steps)-1].Step
}

// A static PyTorchJob and a TFJob whose programs save only when they are told to stop
// (saves_on_stop.py), each with a declared checkpoint, rescaled from 2 to 3 processes, which
// replaces them: the plan says each resumes, and each new run of 3 processes starts from the step
// its first process saved at the stop. The PyTorchJob saves on a claim, to the file its command
// names; the TFJob on a hostPath folder its pod patch mounts, where the checkpoint's variable
// tells its program, and the plans that create and replace it say once that the provider trusts
// the program to keep it there. Then the action restarts the PyTorchJob in place: the same job,
// new pods, a save at the stop and a new run from that step, and an empty plan.
func TestAccRealNode_pytorchAndTFJobsWithACheckpointResumeAfterTheirReplacement(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, dir := a.sharedVolume(t, "ckpt-"+suffix)
	pt, tf := "tfacc-ckpt-pt-"+suffix, "tfacc-ckpt-tf-"+suffix
	config := func(workers int) string {
		job := func(kind, name, checkpoint, extra string) string {
			return fmt.Sprintf(`
resource "training_%[1]s_job" "test" {
  name         = %[2]q
  image        = %[3]q
  command      = ["python3", "%[4]s/saves_on_stop.py", "--save-seconds", "3"%[5]s]
  worker_count = %[6]d
  checkpoint   = { path = "/ckpt/%[1]s", save_seconds = 5 }
%[7]s%[8]s
}
`, kind, name, node.Images[images.Training], images.ProgramsDir, checkpoint, workers, extra, onRealNode)
		}
		return providerConfig() +
			job("pytorch", pt, `, "--checkpoint", "/ckpt/pytorch/state.json"`, fmt.Sprintf("  data_volumes = [\"%s:/ckpt\"]\n", claim)) +
			job("tf", tf, "", fmt.Sprintf(`  chief        = true
  pod_patch = { for role in ["chief", "worker"] : role => yamlencode({ spec = {
    volumes    = [{ name = "ckpt", hostPath = { path = %q } }]
    containers = [{ name = "tensorflow", volumeMounts = [{ name = "ckpt", mountPath = "/ckpt" }] }]
  } }) }
`, dir))
	}
	trusted := func(out string) {
		t.Helper()
		if n := strings.Count(out, "the provider cannot see whether what is saved there outlives the pods"); n != 1 {
			t.Errorf("the output says %d times that the provider trusts the program to keep the TFJob's checkpoint; want once:\n%s", n, out)
		}
	}
	first := map[string]string{
		pt: jobs.PyTorch.PodSelector(pt) + "," + jobs.ReplicaTypeLabel + "=master",
		tf: jobs.TF.PodSelector(tf) + "," + jobs.ReplicaTypeLabel + "=chief",
	}
	started := func(name string, world int) event {
		events := a.waitEvents(t, first[name], 3*time.Minute, name+" starting", func(events []event) bool {
			return len(eventsOf(events, "start")) > 0
		})
		s := eventsOf(events, "start")[0]
		if s.Rank != 0 || s.WorldSize != world {
			t.Errorf("%s's first process started as rank %d of %d; want rank 0 of %d", name, s.Rank, s.WorldSize, world)
		}
		return s
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.PyTorch, pt)
		namedJobsGone(t, a, jobs.TF, tf)
	})
	w.write(config(1))
	trusted(flat(w.run("apply", "-auto-approve", "-input=false")))
	reached := map[string]int{}
	for _, name := range []string{pt, tf} {
		started(name, 2)
		events := a.waitEvents(t, first[name], 3*time.Minute, name+" stepping", func(events []event) bool { return lastStep(events) >= 3 })
		reached[name] = lastStep(events)
	}

	w.write(config(2))
	plan := flat(w.run("plan", "-input=false"))
	for _, name := range []string{pt, tf} {
		if want := "Replacing running job default/" + name + ": its training stops to resume from its checkpoint"; !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	trusted(plan)
	out := flat(w.run("apply", "-auto-approve", "-input=false"))
	for kind, name := range map[string]string{"pytorch": pt, "tf": tf} {
		if want := "default/" + name + " stopped within its grace"; !strings.Contains(out, want) {
			t.Errorf("the apply does not say %q:\n%s", want, out)
		}
		saved := readSaved(t, filepath.Join(dir, kind, "state.json"))
		if saved.WorldSize != 2 || saved.Step < reached[name] {
			t.Errorf("%s saved step %d of %d processes at its stop; want a step of 2, at least %d", name, saved.Step, saved.WorldSize, reached[name])
		}
		if s := started(name, 3); s.ResumedFrom != saved.Step {
			t.Errorf("the new run of %s resumed from step %d; the stop saved step %d", name, s.ResumedFrom, saved.Step)
		}
	}

	// Restarted in place by the action (Terraform 1.14 and later): the same job object, new pods;
	// the program saves at the stop and the new run resumes from that step; the plan stays empty.
	if ok, cli := cliAtLeast(t, "1.14.0"); !ok {
		t.Logf("the restart action needs Terraform 1.14 or later; this CLI is %s", cli)
		return
	}
	before, err := a.get(jobs.PyTorch.GVR, "default", pt)
	if err != nil {
		t.Fatal(err)
	}
	pods := a.podUIDs(jobs.PyTorch, pt)
	reached[pt] = lastStep(a.waitEvents(t, first[pt], 3*time.Minute, pt+" stepping again", func(events []event) bool { return lastStep(events) > 0 }))
	w.write(config(2) + fmt.Sprintf("\naction \"training_restart_job\" \"pt\" {\n  config {\n    kind = \"pytorch\"\n    name = %q\n  }\n}\n", pt))
	w.run("apply", "-auto-approve", "-input=false", "-invoke=action.training_restart_job.pt")
	after, err := a.get(jobs.PyTorch.GVR, "default", pt)
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != before.GetUID() || a.podUIDs(jobs.PyTorch, pt).HasAny(pods.UnsortedList()...) {
		t.Errorf("the restart replaced the job (UID %s, was %s) or kept one of its pods", after.GetUID(), before.GetUID())
	}
	saved := readSaved(t, filepath.Join(dir, "pytorch", "state.json"))
	if saved.WorldSize != 3 || saved.Step < reached[pt] {
		t.Errorf("%s saved step %d of %d processes at the restart's stop; want a step of 3, at least %d", pt, saved.Step, saved.WorldSize, reached[pt])
	}
	if s := started(pt, 3); s.ResumedFrom != saved.Step {
		t.Errorf("the restarted run of %s resumed from step %d; the stop saved step %d", pt, s.ResumedFrom, saved.Step)
	}
	w.planIsEmpty()
}

// A queued plain mpirun job with a checkpoint, preempted by Kueue for a job of higher priority
// (each needs 600m of the queue's 1 CPU):
// the provider drives nothing here, so what saves the training is what its pods carry (their grace,
// the workers holding their sshd for the ranks, mpirun's daemons waiting the save). The preempted
// job saves at its stop; when the higher one has run and freed the quota, Kueue admits it again
// and its program resumes from the step it saved.
func TestAccRealNode_aQueuedMPIJobPreemptedByKueueSavesAndResumesWhenReadmitted(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, dir := a.sharedVolume(t, "ckpt-"+suffix)
	prefix := "tfacc-preempt-" + suffix
	low, high := a.priorityClass(prefix+"-low", 100), a.priorityClass(prefix+"-high", 1000)
	queues := providerConfig() + fmt.Sprintf(`
resource "training_resource_flavor" "real" {
  name        = "%[1]s-real"
  node_labels = { %[2]q = "true" }
  tolerations = [%[3]q]
}

resource "training_cluster_queue" "team" {
  name = "%[1]s-team"
  resource_group {
    covered_resources = ["cpu"]
    flavor {
      name = training_resource_flavor.real.name
      resource {
        name          = "cpu"
        nominal_quota = "1"
      }
    }
  }
  preemption {
    within_cluster_queue = "LowerPriority"
  }
}

resource "training_local_queue" "team" {
  name          = %[1]q
  cluster_queue = training_cluster_queue.team.name
}
`, prefix, realnode.Label, realnode.Taint)
	job := func(resource, name, priority, command, extra string) string {
		return fmt.Sprintf(`
resource "training_mpi_job" %[1]q {
  name                = %[2]q
  image               = %[3]q
  command             = %[4]s
  worker_count        = 1
  cpu                 = "600m"
  priority_class_name = %[5]q
  queue_name          = training_local_queue.team.name
  wait_for            = "created"
%[6]s%[7]s
}
`, resource, name, node.Images[images.Training], command, priority, extra, onRealNode)
	}
	saving := job("low", prefix+"-low", low, fmt.Sprintf(`["mpirun", "python3", "%s/mpi_checkpoint.py", "--checkpoint", "/ckpt/state.json", "--save-seconds", "3"]`, images.ProgramsDir),
		fmt.Sprintf("  data_volumes = [\"%s:/ckpt\"]\n  checkpoint   = { path = \"/ckpt\", save_seconds = 5 }\n", claim))
	urgent := job("high", prefix+"-high", high, fmt.Sprintf(`["mpirun", "python3", "%s/mpi_allreduce.py"]`, images.ProgramsDir), "")
	launcher := mpiLauncher

	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.MPI, prefix+"-low", prefix+"-high")
	})
	w.write(queues + saving)
	w.run("apply", "-auto-approve", "-input=false")
	events := a.waitEvents(t, launcher(prefix+"-low"), 3*time.Minute, "the low job stepping", func(events []event) bool { return lastStep(events) >= 3 })
	reached := lastStep(events)

	var before []string
	for _, p := range a.pods("default", launcher(prefix+"-low")) {
		before = append(before, p.Name)
	}

	// The urgent job preempts it, runs its allreduce and finishes, which frees the quota again.
	w.write(queues + saving + urgent)
	w.run("apply", "-auto-approve", "-input=false")
	a.waitEvents(t, launcher(prefix+"-high"), 3*time.Minute, "the urgent job's allreduce", func(events []event) bool {
		return len(eventsOf(events, "allreduce")) > 0
	})
	// Kueue frees the quota once mpi-operator reports the job inactive, which it does as it deletes
	// the pods: the urgent job may have run before the preempted one's save ended.
	file := filepath.Join(dir, "state.json")
	if err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(context.Context) (bool, error) {
		_, err := os.Stat(file)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the preempted job saved nothing within a minute:\n%s", a.podStates())
	}
	saved := readSaved(t, file)
	if saved.WorldSize != 1 || saved.Step < reached {
		t.Errorf("the preempted job saved step %d of %d ranks; want a step of 1 rank, at least %d", saved.Step, saved.WorldSize, reached)
	}
	// The readmitted job's launcher is a new pod (the preempted one may still be going).
	var again []event
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
		for _, p := range a.pods("default", launcher(prefix+"-low")) {
			if !slices.Contains(before, p.Name) {
				events, _ := a.events(p.Name)
				if again = eventsOf(events, "start"); len(again) > 0 {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the preempted job never started again: %v\n%s", err, a.podStates())
	}
	if s := again[0]; s.ResumedFrom != saved.Step {
		t.Errorf("the readmitted job resumed from step %d; its preemption saved step %d", s.ResumedFrom, saved.Step)
	}
}
