package jobs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// arenaSSDSpec is the Arena walkthrough's `arena submit mpi --name=mpi-dist --gpus=1 --workers=1
// --toleration ssd_node`, plus every optional setting so the golden shows where each one lands.
func arenaSSDSpec() MPIJobSpec {
	ssd, _ := ParseToleration("ssd_node")
	return MPIJobSpec{
		Name:      "mpi-dist",
		Namespace: "default",
		Pod: PodOptions{
			Image:              "registry.cn-hangzhou.aliyuncs.com/tensorflow-samples/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5",
			GPUs:               1,
			CPU:                "4",
			Memory:             "16Gi",
			Env:                map[string]string{"NCCL_DEBUG": "INFO", "B_VAR": "b"},
			Labels:             map[string]string{"team": "vision"},
			Annotations:        map[string]string{"owner": "ml-platform"},
			NodeSelector:       map[string]string{"nvidia.com/gpu.present": "true"},
			Tolerations:        []corev1.Toleration{ssd},
			PriorityClassName:  "high",
			ServiceAccountName: "trainer",
			ImagePullSecrets:   []string{"registry"},
			ImagePullPolicy:    corev1.PullIfNotPresent,
			DataVolumes:        []DataVolume{{Claim: "imagenet", MountPath: "/data"}},
			ShmSize:            "2Gi",
			// launcher_cpu and launcher_memory, as the launcher's role says them.
			Roles: map[string]RoleOptions{"launcher": {CPU: "1", Memory: "1Gi"}},
		},
		LauncherCommand: []string{"mpirun", "python", "/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py", "--model", "resnet101"},
		Workers:         1,
		RunPolicy: RunPolicy{
			CleanPodPolicy:          "Running",
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			BackoffLimit:            ptr.To[int32](3),
			ActiveDeadlineSeconds:   ptr.To[int64](86400),
			QueueName:               "gpu-queue",
		},
	}
}

// The MPIJob of Arena's walkthrough with every optional setting is, field for field, the one
// written by hand in testdata from mpi-operator's API and Arena's MPIJob.
func TestNewMPIJobGolden(t *testing.T) {
	obj, _, err := arenaSSDSpec().Build()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "mpijob-arena-ssd.yaml")
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	built, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(built, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MPIJob differs from %s, which is kept by hand (-want +got):\n%s", golden, diff)
	}
}

func TestReadMPIJobRoundTrip(t *testing.T) {
	spec := arenaSSDSpec()
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadMPIJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := spec
	want.WorkerCommand = DefaultWorkerCommand
	want.SlotsPerWorker = 1
	want.Pod.GPUResource = DefaultGPUResource
	want.Pod.MountShm = true // a shm volume is mounted, since shm_size is set
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadMPIJob(NewMPIJob(spec)) (-want +got):\n%s", diff)
	}
}

// Elastic Horovod as mpi-operator's discovery script makes it possible: horovodrun counts
// processes, so the bounds are workers times slots; a host that a scale-down removed is taken
// back after a cooldown when a scale-up brings its name back (Horovod blacklists it otherwise).
func TestElasticMPIJob(t *testing.T) {
	spec := arenaSSDSpec()
	spec.Workers, spec.SlotsPerWorker = 2, 4
	spec.Elastic = &MPIElastic{MinWorkers: 1, MaxWorkers: 3}
	spec.LauncherCommand = []string{"python", "train.py", "--epochs", "90"}
	spec.MountDataOnLauncher = true
	obj, job := buildMPIJob(t, spec)
	launcher := job.Spec.MPIReplicaSpecs[mpiLauncher].Template
	want := []string{"horovodrun", "-np", "8", "--min-np", "4", "--max-np", "12", "--slots-per-host", "4",
		"--host-discovery-script", "/etc/mpi/discover_hosts.sh", "--blacklist-cooldown-range", "1", "300", "python", "train.py", "--epochs", "90"}
	if diff := cmp.Diff(want, launcher.Spec.Containers[0].Command); diff != "" {
		t.Errorf("launcher command (-want +got):\n%s", diff)
	}
	if len(launcher.Spec.Volumes) == 0 || launcher.Spec.Volumes[0].PersistentVolumeClaim == nil {
		t.Errorf("mount_data_on_launcher: launcher volumes %v", launcher.Spec.Volumes)
	}
	got, err := ReadMPIJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec.Elastic, got.Elastic); diff != "" || !got.MountDataOnLauncher ||
		!cmp.Equal(spec.LauncherCommand, got.LauncherCommand) {
		t.Errorf("ReadMPIJob: elastic %v (diff %s), mount on launcher %v, command %v", got.Elastic, diff, got.MountDataOnLauncher, got.LauncherCommand)
	}
	spec.Workers = 4
	if _, err := NewMPIJob(spec); err == nil {
		t.Error("4 workers outside 1..3 must be refused")
	}
	// A job made before the cooldown reads back with the same bounds and command.
	legacy := slices.Delete(slices.Clone(want), 11, 14)
	if e, command, ok := readElasticLauncherCommand(legacy); !ok || *spec.Elastic != e || !cmp.Equal(spec.LauncherCommand, command) {
		t.Errorf("a launcher command without the cooldown reads as %v %v %v", e, command, ok)
	}
	plain, _ := buildMPIJob(t, arenaSSDSpec())
	if read, err := ReadMPIJob(plain); err != nil || read.Elastic != nil {
		t.Errorf("a plain mpirun command read as elastic: %v %v", read.Elastic, err)
	}
}

// buildMPIJob builds the MPIJob of spec, as an object and typed.
func buildMPIJob(t *testing.T, spec MPIJobSpec) (*unstructured.Unstructured, mpiJob) {
	t.Helper()
	obj, err := NewMPIJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	var job mpiJob
	if err := fromUnstructured(obj, &job); err != nil {
		t.Fatal(err)
	}
	return obj, job
}

// Containers that request no GPU are told to see none; those that do are left to the device plugin.
func TestNoGPUContainersSeeNoGPU(t *testing.T) {
	for gpus, want := range map[int64]string{0: NoGPUs, 1: ""} {
		obj, job := buildMPIJob(t, MPIJobSpec{Name: "j", Pod: PodOptions{Image: "i", GPUs: gpus}, Workers: 1})
		if got := visibleDevices(job.Spec.MPIReplicaSpecs[mpiWorker].Template.Spec.Containers[0].Env); got != want {
			t.Errorf("%d GPUs: worker %s=%q, want %q", gpus, NvidiaVisibleDevices, got, want)
		}
		// mpi-operator hides the GPUs from the launcher itself (an empty value, appended last).
		for _, e := range job.Spec.MPIReplicaSpecs[mpiLauncher].Template.Spec.Containers[0].Env {
			if e.Name == NvidiaVisibleDevices {
				t.Errorf("launcher has %s=%q: it would shadow mpi-operator's own", e.Name, e.Value)
			}
		}
		read, err := ReadMPIJob(obj)
		if err != nil || len(read.Pod.Env) != 0 {
			t.Errorf("%d GPUs: ReadMPIJob env %v (%v); the provider's own variable is not the user's", gpus, read.Pod.Env, err)
		}
	}
	// The user's own value wins.
	_, job := buildMPIJob(t, MPIJobSpec{Name: "j", Pod: PodOptions{Image: "i", Env: map[string]string{NvidiaVisibleDevices: "0"}}, Workers: 1})
	if env := job.Spec.MPIReplicaSpecs[mpiWorker].Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Value != "0" {
		t.Errorf("user's %s overridden: %v", NvidiaVisibleDevices, env)
	}
}

func TestDefaultSlots(t *testing.T) {
	for gpus, want := range map[int64]int32{0: 1, 1: 1, 4: 4, 8: 8} {
		if got := DefaultSlots(gpus); got != want {
			t.Errorf("DefaultSlots(%d) = %d, want %d", gpus, got, want)
		}
	}
}

func TestMPIRescalePatch(t *testing.T) {
	var ops []map[string]any
	if err := json.Unmarshal(MPI.RescalePatch(2, 4), &ops); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"op": "test", "path": "/spec/mpiReplicaSpecs/Worker/replicas", "value": 2.0},
		{"op": "replace", "path": "/spec/mpiReplicaSpecs/Worker/replicas", "value": 4.0},
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
}

func mpiJobWithStatus(t *testing.T, status map[string]any) *unstructured.Unstructured {
	t.Helper()
	obj, err := NewMPIJob(MPIJobSpec{Name: "j", Namespace: "default", Pod: PodOptions{Image: "i"}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if status != nil {
		obj.Object["status"] = status
	}
	return obj
}

func condition(kind string) map[string]any { return map[string]any{"type": kind, "status": "True"} }

func pod(name, role string, phase corev1.PodPhase, node string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{JobRoleLabel: role}},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

func TestKubeflowStatus(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := start.Add(29 * time.Second)
	cases := []struct {
		name       string
		conditions []any
		completion bool
		phase      string
		duration   time.Duration
	}{
		{"no conditions", nil, false, Pending, 29 * time.Second},
		{"created", []any{condition("Created")}, false, Pending, 29 * time.Second},
		{"running", []any{condition("Created"), condition("Running")}, false, Running, 29 * time.Second},
		{"restarting", []any{condition("Created"), condition("Restarting")}, false, Running, 29 * time.Second},
		{"succeeded", []any{condition("Running"), condition("Succeeded")}, true, Succeeded, 10 * time.Second},
		{"failed", []any{condition("Failed")}, true, Failed, 10 * time.Second},
		{"suspended", []any{condition("Suspended")}, false, Suspended, 29 * time.Second},
		{"running condition false", []any{map[string]any{"type": "Running", "status": "False"}}, false, Pending, 29 * time.Second},
	}
	for _, c := range cases {
		status := map[string]any{"startTime": start.Format(time.RFC3339)}
		if c.conditions != nil {
			status["conditions"] = c.conditions
		}
		if c.completion {
			status["completionTime"] = start.Add(10 * time.Second).Format(time.RFC3339)
		}
		o := Observed{
			Object: mpiJobWithStatus(t, status),
			Pods: []corev1.Pod{
				pod("j-worker-1", "worker", corev1.PodRunning, "n2"),
				pod("j-launcher-x", "launcher", corev1.PodRunning, "n1"),
				pod("j-worker-0", "worker", corev1.PodPending, ""),
			},
		}
		got, err := MPI.Status(o, now)
		if err != nil {
			t.Fatal(err)
		}
		if got.Phase != c.phase || got.Duration != c.duration {
			t.Errorf("%s: phase %s duration %s, want %s %s", c.name, got.Phase, got.Duration, c.phase, c.duration)
		}
		wantInstances := []Instance{
			{Name: "j-launcher-x", Role: "launcher", Phase: "Running", Node: "n1"},
			{Name: "j-worker-0", Role: "worker", Phase: "Pending"},
			{Name: "j-worker-1", Role: "worker", Phase: "Running", Node: "n2"},
		}
		if diff := cmp.Diff(wantInstances, got.Instances); diff != "" {
			t.Errorf("%s: instances (-want +got):\n%s", c.name, diff)
		}
	}
}

func deleting(p corev1.Pod) corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	return p
}

func TestMPIJobRunning(t *testing.T) {
	running := mpiJobWithStatus(t, map[string]any{"conditions": []any{condition("Running")}})
	pods := func(workers int, extra ...corev1.Pod) []corev1.Pod {
		out := []corev1.Pod{pod("l", "launcher", corev1.PodRunning, "n")}
		for i := 0; i < workers; i++ {
			out = append(out, pod("w"+string(rune('0'+i)), "worker", corev1.PodRunning, "n"))
		}
		return append(out, extra...)
	}
	cases := []struct {
		name    string
		o       Observed
		done    bool
		failure string
	}{
		{"not created yet", Observed{}, false, ""},
		{"exactly the workers", Observed{Object: running, Pods: pods(2)}, true, ""},
		{"one worker short", Observed{Object: running, Pods: pods(1)}, false, ""},
		{"a removed worker still there", Observed{Object: running, Pods: pods(2, pod("w9", "worker", corev1.PodRunning, "n"))}, false, ""},
		{"a removed worker being deleted", Observed{Object: running, Pods: pods(2, deleting(pod("w9", "worker", corev1.PodRunning, "n")))}, false, ""},
		{"pods run but not reported running", Observed{Object: mpiJobWithStatus(t, nil), Pods: pods(2)}, false, ""},
		{"succeeded before the wait saw it", Observed{Object: mpiJobWithStatus(t, map[string]any{"conditions": []any{condition("Succeeded")}})}, true, ""},
		{"failed", Observed{Object: mpiJobWithStatus(t, map[string]any{"conditions": []any{
			map[string]any{"type": "Failed", "status": "True", "reason": "MPIJobFailed", "message": "launcher failed"}}})}, false, "launcher failed"},
		{"refused by the operator", Observed{Object: running, Events: []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "ValidationError", Message: "Found validation errors"}}}, false, "ValidationError"},
		{"an earlier job of the name was refused", Observed{Object: running, Pods: pods(2), Events: []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "ValidationError",
			InvolvedObject: corev1.ObjectReference{UID: "an-earlier-job"}}}}, true, ""},
		{"its pods refused by Pod Security", Observed{Object: running, Events: []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "MPIJobFailed",
			Message: `worker pod created failed: pods "j-worker-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`}}}, false, "the API server refused the job's pods"},
		{"a leftover of an earlier job still there", Observed{Object: running, Pods: pods(2), Events: []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "ErrResourceExists",
			Message: `Resource "j-launcher" of Kind "" already exists and is not managed by MPIJob`}}}, true, ""},
	}
	for _, c := range cases {
		done, _, err := MPI.Running(c.o, RunningWait{Expect: map[string]int{"launcher": 1, "worker": 2}}, time.Now())
		if done != c.done {
			t.Errorf("%s: done = %v, want %v", c.name, done, c.done)
		}
		if (err != nil) != (c.failure != "") || (err != nil && !contains(err.Error(), c.failure)) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.failure)
		}
	}
}

func TestWhyNotRunning(t *testing.T) {
	p := pod("w0", "worker", corev1.PodPending, "")
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Message: "0/6 nodes are available: 6 node(s) had untolerated taint(s)."}}
	got := WhyNotRunning(Observed{Pods: []corev1.Pod{p, p}})
	want := "pod w0 is not scheduled: 0/6 nodes are available: 6 node(s) had untolerated taint(s)."
	if got != want {
		t.Errorf("WhyNotRunning = %q, want %q (once, though two pods say it)", got, want)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// An MPIJob for an unprivileged sshd names where mpi-operator mounts its keys, and reads it
// back; mpi-operator's default (which its CRD writes into every stored job) reads as unset.
func TestMPIJobSSHAuthMountPathRoundTripsAndItsDefaultReadsAsUnset(t *testing.T) {
	spec := arenaSSDSpec()
	spec.SSHAuthMountPath = "/home/mpiuser/.ssh"
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "sshAuthMountPath"); got != "/home/mpiuser/.ssh" {
		t.Errorf("spec.sshAuthMountPath = %q", got)
	}
	read, err := ReadMPIJob(obj)
	if err != nil || read.SSHAuthMountPath != "/home/mpiuser/.ssh" {
		t.Errorf("read back %q (%v)", read.SSHAuthMountPath, err)
	}
	if err := unstructured.SetNestedField(obj.Object, DefaultSSHAuthMountPath, "spec", "sshAuthMountPath"); err != nil {
		t.Fatal(err)
	}
	if read, _ := ReadMPIJob(obj); read.SSHAuthMountPath != "" {
		t.Errorf("mpi-operator's default reads as %q", read.SSHAuthMountPath)
	}
}
