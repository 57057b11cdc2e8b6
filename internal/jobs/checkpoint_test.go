package jobs

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	claim := CheckpointStore{Keeping: Outlives, Volume: "claim ckpt", MountPath: "/ckpt"}
	s3 := Checkpoint{Path: "s3://bucket/run", SaveSeconds: 30}
	objects := CheckpointStore{Keeping: Trusted, Volume: "object storage"}
	for _, c := range []struct {
		name      string
		prev      Checkpoint
		was, will CheckpointStore
		next      *Checkpoint
		same      bool
	}{
		{"the same", prev, claim, claim, &Checkpoint{Path: "/ckpt/run", SaveSeconds: 60}, true},
		{"the same URI", s3, objects, objects, &s3, true},
		{"none declared", prev, claim, CheckpointStore{}, nil, false},
		{"another path", prev, claim, claim, &Checkpoint{Path: "/ckpt/other", SaveSeconds: 30}, false},
		{"another URI", s3, objects, objects, &Checkpoint{Path: "s3://bucket/other", SaveSeconds: 30}, false},
		{"the claim gone", prev, claim, CheckpointStore{Keeping: Outlives, Volume: "claim new", MountPath: "/ckpt"}, &prev, false},
		{"the claim moved", prev, claim, CheckpointStore{Keeping: Outlives, Volume: "claim ckpt", MountPath: "/"}, &prev, false},
		{"now on an emptyDir", prev, claim, CheckpointStore{Keeping: Lost, Volume: "an emptyDir", MountPath: "/ckpt"}, &prev, false},
		{"lost before", prev, CheckpointStore{Keeping: Lost, Volume: "an emptyDir"}, CheckpointStore{Keeping: Lost, Volume: "an emptyDir"}, &prev, false},
	} {
		why, same := SameCheckpoint(c.prev, c.was, c.next, c.will)
		if same != c.same || (why == "") != c.same {
			t.Errorf("%s: SameCheckpoint = %q, %t; want %t with a reason when not", c.name, why, same, c.same)
		}
	}
}

func TestCheckpointURIIsASchemeAndAHost(t *testing.T) {
	for p, want := range map[string]bool{
		"s3://bucket/run": true, "gs://b": true, "az://container/x/y": true, "hdfs://nn:8020/ckpt": true, "s3+https://b/x": true,
		"/ckpt": false, "s3:///run": false, "s3://": false, "bucket/run": false, "://b/x": false, "1s3://b": false, "file:/ckpt": false,
	} {
		if got := CheckpointURI(p); got != want {
			t.Errorf("CheckpointURI(%q) = %t; want %t", p, got, want)
		}
		if err := ParseCheckpointPath(p); (err == nil) != (want || p == "/ckpt") {
			t.Errorf("ParseCheckpointPath(%q) = %v", p, err)
		}
	}
}

// The store of a checkpoint is judged by the volume the pods mount deepest at its path, in any
// container of any role; the least kept of the roles that mount one there wins.
func TestCheckpointStoreOfJudgesTheVolumeThePodsMount(t *testing.T) {
	pod := func(mounts []corev1.VolumeMount, volumes ...corev1.Volume) RolePods {
		return RolePods{Role: "worker", Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main"}, {Name: "sidecar", VolumeMounts: mounts}}, Volumes: volumes}}}
	}
	mount := func(name, at string) []corev1.VolumeMount { return []corev1.VolumeMount{{Name: name, MountPath: at}} }
	vol := func(name string, src corev1.VolumeSource) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: src}
	}
	claim := vol("c", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "ckpt"}})
	nfs := vol("n", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/exports"}})
	host := vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/ckpt"}})
	csi := vol("g", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "gcsfuse.csi.storage.gke.io"}})
	empty := vol("e", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})
	ephemeral := vol("x", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})
	secret := vol("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}})
	for _, c := range []struct {
		name  string
		path  string
		roles []RolePods
		want  Keeping
		says  string
	}{
		{"a claim", "/ckpt/run", []RolePods{pod(mount("c", "/ckpt"), claim)}, Outlives, "claim ckpt at /ckpt"},
		{"an NFS share", "/ckpt", []RolePods{pod(mount("n", "/ckpt"), nfs)}, Outlives, "NFS share nfs.example:/exports at /ckpt"},
		{"a hostPath", "/ckpt/run", []RolePods{pod(mount("h", "/ckpt"), host)}, Trusted, "hostPath /mnt/ckpt"},
		{"a CSI volume", "/ckpt/run", []RolePods{pod(mount("g", "/ckpt"), csi)}, Trusted, "CSI driver gcsfuse.csi.storage.gke.io"},
		{"object storage", "s3://bucket/run", []RolePods{pod(nil)}, Trusted, "object storage"},
		{"a volume not in the pod", "/ckpt", []RolePods{pod(mount("elsewhere", "/ckpt"))}, Trusted, "volume elsewhere"},
		{"an emptyDir", "/ckpt/run", []RolePods{pod(mount("e", "/ckpt"), empty)}, Lost, "emptyDir"},
		{"an ephemeral volume", "/ckpt/run", []RolePods{pod(mount("x", "/ckpt"), ephemeral)}, Lost, "ephemeral"},
		{"a Secret", "/ckpt/run", []RolePods{pod(mount("s", "/ckpt"), secret)}, Lost, "Secret"},
		{"read-only", "/ckpt/run", []RolePods{pod([]corev1.VolumeMount{{Name: "c", MountPath: "/ckpt", ReadOnly: true}}, claim)}, Lost, "read-only"},
		{"no mount", "/ckpt/run", []RolePods{pod(mount("c", "/data"), claim)}, Lost, "own filesystem"},
		{"a sibling folder", "/ckpts", []RolePods{pod(mount("c", "/ckpt"), claim)}, Lost, "own filesystem"},
		{"the deepest mount", "/data/ckpt/run", []RolePods{pod(append(mount("c", "/data"), mount("e", "/data/ckpt")...), claim, empty)}, Lost, "emptyDir"},
		{"a role without it", "/ckpt", []RolePods{pod(nil), pod(mount("c", "/ckpt"), claim)}, Outlives, "claim ckpt"},
		{"the least kept role", "/ckpt", []RolePods{pod(mount("c", "/ckpt"), claim), pod(mount("h", "/ckpt"), host)}, Trusted, "hostPath"},
	} {
		s := CheckpointStoreOf(c.path, c.roles)
		if s.Keeping != c.want || !strings.Contains(s.String(), c.says) {
			t.Errorf("%s: CheckpointStoreOf(%q) = %v (%q); want %v saying %q", c.name, c.path, s.Keeping, s, c.want, c.says)
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
	for role, c := range map[string]corev1.Container{"launcher": launcher.Spec.Containers[0], "worker": worker.Spec.Containers[0]} {
		if l := c.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Exec == nil || !strings.Contains(strings.Join(l.PreStop.Exec.Command, " "), "prted") {
			t.Errorf("the %s has no preStop hook that stops the ranks of Open MPI 5's daemons: %v", role, l)
		}
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
	// Its own, even when it equals the save, reads back as its own.
	spec.Pod.Env = map[string]string{OpenMPISigkillTimeout: "45"}
	if obj, _, err = spec.Build(); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadMPIJob(obj); err != nil {
		t.Fatal(err)
	}
	if got.Pod.Env[OpenMPISigkillTimeout] != "45" {
		t.Errorf("the job's own %s=45 reads back as %v", OpenMPISigkillTimeout, got.Pod.Env)
	}

	// Without a checkpoint, none of it.
	spec = arenaSSDSpec()
	obj, _, _ = spec.Build()
	if templateOf(t, MPI, obj, "worker").Spec.Containers[0].Lifecycle != nil || templateOf(t, MPI, obj, "launcher").Spec.Containers[0].Lifecycle != nil ||
		obj.GetAnnotations()[CheckpointAnnotation] != "" {
		t.Error("a job without a checkpoint has a preStop hook or a checkpoint annotation")
	}
}

// Every MPIJob's launcher names mpi-operator's hostfile for Open MPI 5 too (the golden file shows
// it), unless the job names its own; it is not the job's env when it is read back.
func TestAnMPIJobsLauncherNamesItsHostfileForOpenMPI5(t *testing.T) {
	spec := arenaSSDSpec()
	spec.Pod.Env = map[string]string{"PRTE_MCA_prte_default_hostfile": "/etc/hosts.mpi"}
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, e := range templateOf(t, MPI, obj, "launcher").Spec.Containers[0].Env {
		got[e.Name] = append(got[e.Name], e.Value)
	}
	if !slices.Equal(got["PRTE_MCA_prte_default_hostfile"], []string{"/etc/hosts.mpi"}) {
		t.Errorf("the launcher's PRRTE hostfile: %v; want the job's own alone", got["PRTE_MCA_prte_default_hostfile"])
	}
	read, err := ReadMPIJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec.Pod.Env, read.Pod.Env); diff != "" {
		t.Errorf("the env read back (-want +got):\n%s", diff)
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

// A job with a checkpoint tells its program where to save and how long it has: every role that
// trains has the variables in its containers (an elastic job's etcd has not), and an MPIJob's
// mpirun passes them on to the ranks.
func TestEveryKindGivesItsTrainingTheCheckpointsVariables(t *testing.T) {
	for k, example := range kindExamples {
		obj, _, err := example.spec(false).Build()
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		var runtime *unstructured.Unstructured
		if example.runtime != nil {
			runtime = example.runtime(t)
		}
		roles, err := k.Roles(obj, runtime)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		for _, r := range roles {
			env := map[string]string{}
			for _, e := range r.Template.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			want := map[string]string{CheckpointPathEnv: exampleCheckpoint.Path, CheckpointSaveSecondsEnv: "30"}
			if r.Role == EtcdRole {
				want = map[string]string{CheckpointPathEnv: "", CheckpointSaveSecondsEnv: ""}
			}
			for name, value := range want {
				if env[name] != value {
					t.Errorf("%s's %s: %s = %q; want %q", k.Name, r.Role, name, env[name], value)
				}
			}
			if k == MPI && r.Role == "launcher" && !slices.Contains(strings.Split(env[OpenMPIEnvList], ";"), CheckpointPathEnv) {
				t.Errorf("the launcher's mpirun does not pass %s on to the ranks: %s = %q", CheckpointPathEnv, OpenMPIEnvList, env[OpenMPIEnvList])
			}
		}
	}
}

func TestAcceleratorsCountsTheGPUResourceOfEveryPod(t *testing.T) {
	limits := func(count int, l corev1.ResourceList) RolePods {
		return RolePods{Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Limits: l}}, {Name: "sidecar"}}}}}
	}
	worker := limits(4, corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), "rdma/hca": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("32")})
	launcher := limits(1, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})
	if n := Accelerators([]RolePods{worker, launcher}, "nvidia.com/gpu"); n != 32 {
		t.Errorf("Accelerators = %d; want 4 workers of 8 GPUs, 32", n)
	}
	if n := Accelerators([]RolePods{worker}, "amd.com/gpu"); n != 0 {
		t.Errorf("Accelerators of another resource = %d; want 0", n)
	}
	if got := AcceleratorHours(64, 36.5); got != 2336 {
		t.Errorf("64 GPUs for 36.5 hours = %v accelerator-hours; want 2336", got)
	}
	if got := AcceleratorHours(8, 1.0/3); got != 2.67 {
		t.Errorf("8 GPUs for 20 minutes = %v; want 2.67", got)
	}
}

// A job object says the accelerators its pods hold: an MPIJob's workers' GPUs (its launcher has
// none), a TrainJob's GPUs per node on each node (its runtime unread), none for a job without.
func TestKindAcceleratorsReadsAWholeJobObject(t *testing.T) {
	mpi, _, err := MPIJobSpec{Name: "j", Namespace: "default", Workers: 3, LauncherCommand: []string{"mpirun", "x"},
		Pod: PodOptions{Image: "i", GPUs: 2, GPUResource: DefaultGPUResource}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	train, _, err := trainSpec().Build()
	if err != nil {
		t.Fatal(err)
	}
	cpu, _, err := MPIJobSpec{Name: "j", Namespace: "default", Workers: 3, LauncherCommand: []string{"mpirun", "x"}, Pod: PodOptions{Image: "i"}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		k    *Kind
		obj  *unstructured.Unstructured
		want int64
	}{{"3 workers of 2 GPUs", MPI, mpi, 6}, {"2 nodes of 1 GPU", Train, train, 2}, {"no GPU", MPI, cpu, 0}} {
		if got := c.k.Accelerators(c.obj, ""); got != c.want {
			t.Errorf("%s: Accelerators = %d; want %d", c.what, got, c.want)
		}
	}
}
