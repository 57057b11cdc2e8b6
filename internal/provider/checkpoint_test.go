package provider

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// The plan of a replacement of a running job says what becomes of its training: with a checkpoint
// the new job finds, that it stops with its grace to resume; with one the new job would not find,
// that it is lost and why; without one, that the training starts from the beginning. The grace a
// checkpoint needs is in the state, and the apply says how long the pods took to stop.
func TestAccCheckpoint_thePlanOfAReplacementSaysWhatBecomesOfTheTraining(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, _ := a.sharedVolume(t, "ckpt-"+suffix)
	keeps, moves, bare := "tf-acc-keeps-"+suffix, "tf-acc-moves-"+suffix, "tf-acc-bare-"+suffix
	job := func(resource, name, image, checkpoint string) string {
		return fmt.Sprintf(`
resource "training_pytorch_job" %[1]q {
  name         = %[2]q
  image        = %[3]q
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 1
  gpus         = 1
  tolerations  = ["gpu_node"]
  data_volumes = ["%[4]s:/ckpt"]
%[5]s
}
`, resource, name, image, claim, checkpoint)
	}
	config := func(image, movedTo string) string {
		return providerConfig() +
			job("keeps", keeps, image, `  checkpoint = { path = "/ckpt/keeps", save_seconds = 30 }`) +
			job("moves", moves, image, fmt.Sprintf(`  checkpoint = { path = %q, save_seconds = 30 }`, movedTo)) +
			job("bare", bare, image, "")
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.PyTorch, keeps, moves, bare)
	})
	w.write(config("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "/ckpt/moves"))
	w.run("apply", "-auto-approve", "-input=false")
	if show := flat(w.run("state", "show", "training_pytorch_job.keeps")); !strings.Contains(show, "termination_grace_period_seconds = 40") {
		t.Errorf("the grace of a job whose save takes 30 s is not 40 s in state:\n%s", show)
	}

	w.write(config("pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime", "/ckpt/elsewhere"))
	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []string{
		"Replacing running job default/" + keeps + ": its training stops to resume from its checkpoint",
		"given 40 seconds to save to /ckpt/keeps (claim " + claim + ")",
		"mounts claim " + claim + " at /ckpt again and resumes from /ckpt/keeps",
		"Replacing running job default/" + moves + " loses its checkpoint",
		"the new job saves to /ckpt/elsewhere instead of /ckpt/moves",
		"Replacing running job default/" + bare + " starts its training from the beginning",
		"Kubernetes' default grace of 30 seconds",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	out := flat(w.run("apply", "-auto-approve", "-input=false"))
	for _, name := range []string{keeps, moves} {
		if !regexp.MustCompile(`default/` + name + ` stopped within its grace.*in [0-9]+s of their 40s grace`).MatchString(out) {
			t.Errorf("the apply does not say how long %s took to stop:\n%s", name, out)
		}
	}
	if strings.Contains(out, bare+" stopped") {
		t.Errorf("the apply says how a job without a checkpoint stopped:\n%s", out)
	}
}

// After a stop, a job with a checkpoint is said to have stopped within its grace, or warned of as
// killed at its end; a job without one is not spoken of.
func TestSayStoppedTellsAStopWithinTheGraceFromAKill(t *testing.T) {
	withCheckpoint := &podModel{GracePeriod: types.Int64Value(40), Checkpoint: checkpointValue(&jobs.Checkpoint{Path: "/ckpt", SaveSeconds: 30})}
	for _, c := range []struct {
		took time.Duration
		want string
	}{
		{12 * time.Second, "MPIJob default/j stopped within its grace|Its pods stopped in 12s of their 40s grace"},
		{41 * time.Second, "MPIJob default/j was killed at the end of its grace|took 41s to stop, the whole grace of 40s"},
	} {
		var diags diag.Diagnostics
		sayStopped(&diags, "MPIJob default/j", withCheckpoint, c.took)
		if len(diags) != 1 || diags[0].Severity() != diag.SeverityWarning {
			t.Fatalf("after %s: %v; want one warning", c.took, diags)
		}
		summary, detail, _ := strings.Cut(c.want, "|")
		if diags[0].Summary() != summary || !strings.Contains(diags[0].Detail(), detail) {
			t.Errorf("after %s: %q: %q; want %q and %q", c.took, diags[0].Summary(), diags[0].Detail(), summary, detail)
		}
	}
	var diags diag.Diagnostics
	sayStopped(&diags, "MPIJob default/j", &podModel{GracePeriod: types.Int64Null(), Checkpoint: checkpointValue(nil)}, time.Minute)
	if len(diags) != 0 {
		t.Errorf("a job without a checkpoint is spoken of: %v", diags)
	}
}

// A TrainJob with a checkpoint on an MPI runtime that declares none is warned that its ranks will
// not get the time to save; once the runtime declares it, the warning goes.
func TestAccCheckpoint_aTrainJobOnAnMPIRuntimeWithoutOneIsWarned(t *testing.T) {
	newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tf-acc-tjc")
	runtime := func(checkpoint string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_runtime" "mpi" {
  name         = "%[1]s-rt"
  framework    = "mpi"
  image        = "mpioperator/mpi-pi:openmpi"
  command      = ["mpirun", "python3", "/train.py"]
  data_volumes = ["checkpoints:/ckpt"]
  mpi          = {}
%[2]s
}
`, name, checkpoint)
	}
	job := fmt.Sprintf(`
resource "training_train_job" "test" {
  name         = %[1]q
  runtime      = training_runtime.mpi.name
  num_nodes    = 2
  data_volumes = ["checkpoints:/ckpt"]
  checkpoint   = { path = "/ckpt/run", save_seconds = 30 }
  wait_for     = "created"
}
`, name)
	const warning = "The runtime does not stop its ranks for a save"
	w := newWorkspace(t)
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false") })
	for _, c := range []struct {
		checkpoint string
		warned     bool
	}{
		{"", true},
		{`  checkpoint   = { path = "/ckpt/run", save_seconds = 30 }`, false},
	} {
		w.write(runtime(c.checkpoint))
		w.run("apply", "-auto-approve", "-input=false")
		w.write(runtime(c.checkpoint) + job)
		if plan := flat(w.run("plan", "-input=false")); strings.Contains(plan, warning) != c.warned {
			t.Errorf("with the runtime's checkpoint %q, the plan says %q: %t, want %t:\n%s", c.checkpoint, warning, !c.warned, c.warned, plan)
		}
	}
}

// The plan of a replacement says what it does to a training that is not running: a suspended job
// whose checkpoint the change moves loses it (its runs saved there when they were stopped), a
// suspended one that keeps it resumes from it, and a finished job runs its training again, from
// its checkpoint where the new job finds it, from the beginning without one.
func TestAccCheckpoint_thePlanSaysWhatAReplacementDoesToAStoppedOrFinishedTraining(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, _ := a.sharedVolume(t, "ckpt-"+suffix)
	moves, keeps, done, bare := "tf-acc-smoves-"+suffix, "tf-acc-skeeps-"+suffix, "tf-acc-done-"+suffix, "tf-acc-donebare-"+suffix
	job := func(resource, name, image, extra string) string {
		return fmt.Sprintf(`
resource "training_pytorch_job" %[1]q {
  name         = %[2]q
  image        = %[3]q
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 1
  tolerations  = ["all"]
  data_volumes = ["%[4]s:/ckpt"]
%[5]s
}
`, resource, name, image, claim, extra)
	}
	config := func(image, movedTo string) string {
		return providerConfig() +
			job("moves", moves, image, fmt.Sprintf("  suspend    = true\n  checkpoint = { path = %q, save_seconds = 30 }", movedTo)) +
			job("keeps", keeps, image, "  suspend    = true\n  checkpoint = { path = \"/ckpt/keeps\", save_seconds = 30 }") +
			job("done", done, image, "  checkpoint = { path = \"/ckpt/done\", save_seconds = 30 }") +
			job("bare", bare, image, "")
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.PyTorch, moves, keeps, done, bare)
	})
	w.write(config("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "/ckpt/moves"))
	w.run("apply", "-auto-approve", "-input=false")
	for _, name := range []string{done, bare} {
		a.finishPods(jobs.PyTorch.PodSelector(name))
		a.waitSucceeded(t, jobs.PyTorch, name)
	}

	w.write(config("pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime", "/ckpt/elsewhere"))
	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []string{
		"Replacing suspended job default/" + moves + " loses its checkpoint",
		"what a run of it saved when it was stopped (preempted, suspended) is at /ckpt/moves (claim " + claim + ")",
		"the new job saves to /ckpt/elsewhere instead of /ckpt/moves",
		"Replacing suspended job default/" + keeps + ": its training resumes from its checkpoint",
		"Replacing succeeded job default/" + done + " runs its training again",
		"Its checkpoint at /ckpt/done holds where the last run ended. The job made in its place mounts claim " + claim + " at /ckpt again",
		"Replacing succeeded job default/" + bare + " runs its training again",
		"It declares no checkpoint: the job made in its place starts from the beginning.",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
}

// A checkpoint is declared where a team keeps it: on a claim or an NFS share (the plan sees that
// it outlives the pods and says nothing), or on object storage or a hostPath a pod patch mounts
// (the plan cannot see, and says once, when it creates the job, that it trusts the program). The
// plan of their replacement says once, per job, which of them resumes and which the provider
// trusts to.
func TestAccCheckpoint_aCheckpointWhereverTheTeamKeepsIt(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	suffix := acctest.RandString(6)
	claim, _ := a.sharedVolume(t, "ckpt-"+suffix)
	mounted := func(volume string) string {
		return fmt.Sprintf(`  pod_patch = { for role in ["master", "worker"] : role => yamlencode({ spec = {
    volumes    = [{ name = "ckpt", %s }]
    containers = [{ name = "pytorch", volumeMounts = [{ name = "ckpt", mountPath = "/ckpt" }] }]
  } }) }
`, volume)
	}
	stores := map[string]string{
		"claim": fmt.Sprintf("  data_volumes = [%q]\n  checkpoint   = { path = \"/ckpt/run\", save_seconds = 20 }\n", claim+":/ckpt"),
		"nfs":   mounted(`nfs = { server = "nfs.example", path = "/exports/ckpt" }`) + "  checkpoint = { path = \"/ckpt/run\", save_seconds = 20 }\n",
		"host":  mounted(`hostPath = { path = "/mnt/ckpt" }`) + "  checkpoint = { path = \"/ckpt/run\", save_seconds = 20 }\n",
		"s3":    "  checkpoint = { path = \"s3://team-ckpt/" + suffix + "\", save_seconds = 20 }\n",
	}
	names := map[string]string{}
	config := func(image string) string {
		out := providerConfig()
		for store, attrs := range stores {
			names[store] = "tf-acc-" + store + "-" + suffix
			out += fmt.Sprintf(`
resource "training_pytorch_job" %[1]q {
  name         = %[2]q
  image        = %[3]q
  command      = ["python3", "/workspace/train.py"]
  worker_count = 1
  tolerations  = ["gpu_node"]
%[4]s}
`, store, names[store], image, attrs)
		}
		return out
	}
	trusts := func(diags map[string][]string) map[string]int {
		count := map[string]int{}
		for address, said := range diags {
			for _, d := range said {
				if strings.Contains(d, "trusts the program") {
					count[address]++
				}
			}
		}
		return count
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.PyTorch, names["claim"], names["nfs"], names["host"], names["s3"])
	})
	w.write(config("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"))
	created := planDiagnostics(t, w.run("plan", "-json", "-input=false"))
	if got, want := trusts(created), map[string]int{"training_pytorch_job.host": 1, "training_pytorch_job.s3": 1}; !maps.Equal(got, want) {
		t.Errorf("the plan that creates the jobs says it trusts the program %v times, by job; want %v:\n%v", got, want, created)
	}
	for store, says := range map[string]string{"host": "/ckpt/run is on hostPath /mnt/ckpt at /ckpt (a folder of whichever node each pod runs on)",
		"s3": "s3://team-ckpt/" + suffix + " is on object storage"} {
		if said := strings.Join(created["training_pytorch_job."+store], "\n"); !strings.Contains(said, says) {
			t.Errorf("the plan of %s does not say %q:\n%s", store, says, said)
		}
	}
	w.run("apply", "-auto-approve", "-input=false")
	for _, store := range []string{"claim", "s3"} {
		pods := a.pods("default", jobs.PyTorch.PodSelector(names[store]))
		for _, p := range pods {
			env := map[string]string{}
			for _, e := range p.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			if want := stores[store]; !strings.Contains(want, env[jobs.CheckpointPathEnv]) || env[jobs.CheckpointPathEnv] == "" || env[jobs.CheckpointSaveSecondsEnv] != "20" {
				t.Errorf("pod %s of %s is not told its checkpoint: %s = %q, %s = %q", p.Name, store, jobs.CheckpointPathEnv, env[jobs.CheckpointPathEnv],
					jobs.CheckpointSaveSecondsEnv, env[jobs.CheckpointSaveSecondsEnv])
			}
		}
	}
	w.planIsEmpty()

	w.write(config("pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime"))
	replaced := planDiagnostics(t, w.run("plan", "-json", "-input=false"))
	if got, want := trusts(replaced), map[string]int{"training_pytorch_job.host": 1, "training_pytorch_job.s3": 1}; !maps.Equal(got, want) {
		t.Errorf("the plan that replaces the jobs says it trusts the program %v times, by job; want %v:\n%v", got, want, replaced)
	}
	for store, says := range map[string]string{
		"claim": "mounts claim " + claim + " at /ckpt again and resumes from /ckpt/run",
		"nfs":   "mounts NFS share nfs.example:/exports/ckpt at /ckpt again and resumes from /ckpt/run",
		"host":  "mounts hostPath /mnt/ckpt at /ckpt (a folder of whichever node each pod runs on) again",
		"s3":    "saves to s3://team-ckpt/" + suffix + " too, and resumes from it",
	} {
		said := strings.Join(replaced["training_pytorch_job."+store], "\n")
		if !strings.Contains(said, "its training stops to resume from its checkpoint") || !strings.Contains(said, says) {
			t.Errorf("the plan that replaces %s does not say it resumes, and %q:\n%s", store, says, said)
		}
	}
}
