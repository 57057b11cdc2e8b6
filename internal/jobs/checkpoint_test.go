package jobs

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestCheckpointVolumeIsTheDeepestMountHoldingThePath(t *testing.T) {
	volumes := []DataVolume{{Claim: "data", MountPath: "/data"}, {Claim: "ckpt", MountPath: "/data/ckpt"}, {Claim: "other", MountPath: "/dat"}}
	for p, want := range map[string]string{
		"/data/ckpt": "ckpt", "/data/ckpt/run-1": "ckpt", "/data/ckpts": "data", "/data": "data", "/dat/x": "other", "/datum": "", "/": "",
	} {
		v, ok := CheckpointVolume(p, volumes)
		if ok != (want != "") || v.Claim != want {
			t.Errorf("CheckpointVolume(%q) = %v, %t; want claim %q", p, v, ok, want)
		}
	}
}

func TestSameCheckpointSaysWhatTheNewJobWouldMiss(t *testing.T) {
	prev := Checkpoint{Path: "/ckpt/run", SaveSeconds: 30}
	volumes := []DataVolume{{Claim: "ckpt", MountPath: "/ckpt"}}
	for _, c := range []struct {
		name    string
		next    *Checkpoint
		volumes []DataVolume
		same    bool
	}{
		{"the same", &Checkpoint{Path: "/ckpt/run", SaveSeconds: 60}, volumes, true},
		{"the same among others", &Checkpoint{Path: "/ckpt/run", SaveSeconds: 30}, append([]DataVolume{{Claim: "data", MountPath: "/data"}}, volumes...), true},
		{"none declared", nil, volumes, false},
		{"another path", &Checkpoint{Path: "/ckpt/other", SaveSeconds: 30}, volumes, false},
		{"the claim gone", &Checkpoint{Path: "/ckpt/run", SaveSeconds: 30}, []DataVolume{{Claim: "new", MountPath: "/ckpt"}}, false},
		{"the claim moved", &Checkpoint{Path: "/ckpt/run", SaveSeconds: 30}, []DataVolume{{Claim: "ckpt", MountPath: "/"}}, false},
	} {
		why, same := SameCheckpoint(prev, volumes, c.next, c.volumes)
		if same != c.same || (why == "") != c.same {
			t.Errorf("%s: SameCheckpoint = %q, %t; want %t with a reason when not", c.name, why, same, c.same)
		}
	}
}

func TestCheckpointSignalProblemFlagsAShellThatDoesNotExec(t *testing.T) {
	for _, c := range []struct {
		command []string
		problem bool
	}{
		{[]string{"mpirun", "python3", "train.py"}, false},
		{[]string{"/bin/sh", "-c", "mpirun python3 train.py"}, true},
		{[]string{"bash", "-c", "cd /work && exec mpirun python3 train.py"}, false},
		{[]string{"/usr/bin/bash", "-lc", "cd /work; mpirun python3 train.py"}, true},
		{[]string{"python3", "-c", "print(1)"}, false},
	} {
		if got := CheckpointSignalProblem(c.command); (got != "") != c.problem {
			t.Errorf("CheckpointSignalProblem(%q) = %q; want a problem: %t", c.command, got, c.problem)
		}
	}
}

// An MPIJob with a checkpoint records it, gives its launcher's mpirun the save as Open MPI's
// sigkill timeout and holds its workers until their daemon is gone; it reads back as it was
// declared, with neither of those in its pod options.
func TestAnMPIJobsCheckpointReachesItsDaemonsAndReadsBack(t *testing.T) {
	spec := arenaSSDSpec()
	spec.Pod.Checkpoint = &Checkpoint{Path: "/data/ckpt", SaveSeconds: 45}
	spec.Pod.TerminationGracePeriod = ptr.To(CheckpointGrace(45, true))
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	launcher := templateOf(t, MPI, obj, "launcher")
	if env := launcher.Spec.Containers[0].Env; !slices.Contains(env, corev1.EnvVar{Name: OpenMPISigkillTimeout, Value: "45"}) {
		t.Errorf("the launcher's env %v lacks %s=45", env, OpenMPISigkillTimeout)
	}
	worker := templateOf(t, MPI, obj, "worker")
	if l := worker.Spec.Containers[0].Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Exec == nil {
		t.Errorf("the worker has no preStop hook: %v", l)
	}
	if g := ptr.Deref(worker.Spec.TerminationGracePeriodSeconds, 0); g != 100 {
		t.Errorf("the workers' grace is %d s; want 2*45+10", g)
	}
	got, err := ReadMPIJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec.Pod.Checkpoint, got.Pod.Checkpoint); diff != "" {
		t.Errorf("the checkpoint read back (-want +got):\n%s", diff)
	}
	if _, ok := got.Pod.Env[OpenMPISigkillTimeout]; ok || got.Pod.Annotations[CheckpointAnnotation] != "" {
		t.Errorf("what the checkpoint adds reads back as the user's: env %v, annotations %v", got.Pod.Env, got.Pod.Annotations)
	}

	// A job that sets the timeout itself keeps its own.
	spec.Pod.Env = map[string]string{OpenMPISigkillTimeout: "5"}
	obj, _, err = spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	var timeouts []string
	for _, e := range templateOf(t, MPI, obj, "launcher").Spec.Containers[0].Env {
		if e.Name == OpenMPISigkillTimeout {
			timeouts = append(timeouts, e.Value)
		}
	}
	if !slices.Equal(timeouts, []string{"5"}) {
		t.Errorf("the launcher's %s: %v; want the job's own 5 alone", OpenMPISigkillTimeout, timeouts)
	}

	// Without a checkpoint, none of it.
	spec = arenaSSDSpec()
	obj, _, _ = spec.Build()
	if templateOf(t, MPI, obj, "worker").Spec.Containers[0].Lifecycle != nil || obj.GetAnnotations()[CheckpointAnnotation] != "" {
		t.Error("a job without a checkpoint has a preStop hook or a checkpoint annotation")
	}
}

// Every kind records its checkpoint and reads it back; a runtime too.
func TestEveryKindReadsBackItsCheckpoint(t *testing.T) {
	c := &Checkpoint{Path: "/data/ckpt", SaveSeconds: 20}
	pod := arenaSSDSpec().Pod
	pod.Roles, pod.Checkpoint = nil, c
	for name, read := range map[string]func() (*Checkpoint, error){
		"TFJob": func() (*Checkpoint, error) {
			obj, _, err := TFJobSpec{Name: "t", Namespace: "default", Pod: pod, Workers: 2, Command: []string{"python3"}}.Build()
			if err != nil {
				return nil, err
			}
			s, err := ReadTFJob(obj)
			return s.Pod.Checkpoint, err
		},
		"PyTorchJob": func() (*Checkpoint, error) {
			obj, _, err := PyTorchJobSpec{Name: "p", Namespace: "default", Pod: pod, Workers: 2, Command: []string{"python3"}}.Build()
			if err != nil {
				return nil, err
			}
			s, err := ReadPyTorchJob(obj)
			return s.Pod.Checkpoint, err
		},
		"runtime": func() (*Checkpoint, error) {
			p := pod
			p.Labels, p.Annotations = nil, nil
			obj, err := NewRuntime(RuntimeSpec{Name: "r", Namespace: "default", Framework: FrameworkMPI, Pod: p, Command: []string{"mpirun", "x"}})
			if err != nil {
				return nil, err
			}
			s, err := ReadRuntime(obj)
			return s.Pod.Checkpoint, err
		},
	} {
		got, err := read()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("%s: the checkpoint read back (-want +got):\n%s", name, diff)
		}
	}
}

// A TrainJob's grace replaces its runtime's: under mpirun it is twice its save and 10 seconds,
// and never less than the runtime's own grace and what the runtime's checkpoint needs.
func TestATrainJobsGraceCoversItsSaveUnderTheRuntimesLauncherAndTheRuntimes(t *testing.T) {
	grace := func(g int64) PodOptions { return PodOptions{TerminationGracePeriod: &g} }
	for _, tc := range []struct {
		name    string
		c       *Checkpoint
		runtime RuntimeSpec
		want    int64
	}{
		{"no checkpoint", nil, RuntimeSpec{Framework: FrameworkTorch, Pod: grace(130)}, 0},
		{"torch runtime", &Checkpoint{Path: "/ckpt", SaveSeconds: 60}, RuntimeSpec{Framework: FrameworkTorch}, 70},
		{"MPI runtime", &Checkpoint{Path: "/ckpt", SaveSeconds: 60}, RuntimeSpec{Framework: FrameworkMPI}, 130},
		{"MPI runtime saving longer", &Checkpoint{Path: "/ckpt", SaveSeconds: 5}, RuntimeSpec{Framework: FrameworkMPI, Pod: grace(130)}, 130},
		{"torch runtime saving shorter", &Checkpoint{Path: "/ckpt", SaveSeconds: 60}, RuntimeSpec{Framework: FrameworkTorch, Pod: grace(40)}, 70},
		{"a job without one on an MPI runtime saving", nil, RuntimeSpec{Framework: FrameworkMPI,
			Pod: PodOptions{Checkpoint: &Checkpoint{Path: "/ckpt", SaveSeconds: 60}, TerminationGracePeriod: ptr.To[int64](130)}}, 130},
	} {
		if got := TrainJobGrace(tc.c, tc.runtime); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
