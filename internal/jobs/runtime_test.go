package jobs

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestRuntimeRoundTrip(t *testing.T) {
	for _, spec := range []RuntimeSpec{
		{Name: "torch", Framework: FrameworkTorch, Nodes: 2, Command: []string{"torchrun", "train.py"}, GangTimeoutSeconds: ptr.To[int32](60),
			Pod: PodOptions{Image: "pytorch:2", GPUs: 1, GPUResource: DefaultGPUResource, Tolerations: []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}}},
		{Name: "mpi", Namespace: "team", Framework: FrameworkMPI, Labels: map[string]string{"tier": "gold"}, Command: []string{"mpirun", "python", "t.py"},
			MPI: ptr.To(DefaultMPIPolicy()), Pod: PodOptions{Image: "horovod:1", NodeSelector: map[string]string{"ssd": "true"}}},
		{Name: "mpi-root", Framework: FrameworkMPI, Command: []string{"mpirun", "t.py"},
			MPI: &MPIPolicy{ProcsPerNode: 2, Implementation: "OpenMPI", SSHAuthMountPath: "/root/.ssh", RunLauncherAsNode: true, NodeCommand: []string{"/usr/sbin/sshd", "-De"}},
			Pod: PodOptions{Image: "mpi:1"}},
		// A checkpoint's launcher sigkill timeout is the runtime's own where its env sets it, even
		// to the save's seconds; otherwise it is the checkpoint's.
		{Name: "mpi-checkpoint", Framework: FrameworkMPI, Command: []string{"mpirun", "t.py"}, MPI: ptr.To(DefaultMPIPolicy()),
			Pod: PodOptions{Image: "mpi:1", Checkpoint: &Checkpoint{Path: "s3://bucket/run", SaveSeconds: 45}}},
		{Name: "mpi-checkpoint-own-timeout", Framework: FrameworkMPI, Command: []string{"mpirun", "t.py"}, MPI: ptr.To(DefaultMPIPolicy()),
			Pod: PodOptions{Image: "mpi:1", Checkpoint: &Checkpoint{Path: "s3://bucket/run", SaveSeconds: 45},
				Env: map[string]string{OpenMPISigkillTimeout: "45"}}},
		// PRRTE's hostfile the runtime's env sets to the launcher's default is its own.
		{Name: "mpi-own-hostfile", Framework: FrameworkMPI, Command: []string{"mpirun", "t.py"}, MPI: ptr.To(DefaultMPIPolicy()),
			Pod: PodOptions{Image: "mpi:1", Env: map[string]string{"PRTE_MCA_prte_default_hostfile": "/etc/mpi/hostfile"}}},
		// An import tells a sensitive variable only by the names the runtime records.
		{Name: "secret", Framework: FrameworkTorch, Command: []string{"torchrun", "t.py"},
			Pod: PodOptions{Image: "pytorch:2", Env: map[string]string{"EPOCHS": "3", "HF_TOKEN": "t"}, SensitiveEnv: []string{"HF_TOKEN"}}},
	} {
		obj, err := NewRuntime(spec)
		if err != nil {
			t.Fatal(err)
		}
		if obj.GetKind() != spec.Kind() || obj.GetLabels()[FrameworkLabel] != spec.Framework {
			t.Errorf("%s: kind %s labels %v", spec.Name, obj.GetKind(), obj.GetLabels())
		}
		back, err := ReadRuntime(obj)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, spec) {
			t.Errorf("read back\n%+v\nwant\n%+v", back, spec)
		}
		jobs := RuntimeJobs(obj)
		want := []RuntimeJob{{Name: "node", Containers: []string{"node"}}}
		if spec.Framework == FrameworkMPI {
			want = append(want, RuntimeJob{Name: "launcher", Containers: []string{"node"}})
		}
		if !reflect.DeepEqual(jobs, want) {
			t.Errorf("%s: runtime jobs %v", spec.Name, jobs)
		}
	}
	if _, err := NewRuntime(RuntimeSpec{Name: "x", Framework: FrameworkTorch, MPI: &MPIPolicy{}}); err == nil {
		t.Error("an MPI policy on a torch runtime")
	}
}

// The pods Trainer makes of a TrainJob on its runtime: the runtime's node template with the
// job's runtime patch merged as Trainer merges it (the job's tolerations replace the runtime's,
// its node selector adds to the runtime's) and its resources per node on the trainer; as many
// as Trainer counts for each replicated job. The placement check reads those pods.
// An MPI runtime's default runs its launcher and nodes as mpiuser, as Trainer's own MPI runtime
// does: with the pods' fsGroup that user, the group Trainer's 0640 private key is readable by.
// Root gets no fsGroup.
func TestMPIRuntimeRunsAsMPIUserWithTheKeysGroup(t *testing.T) {
	for _, user := range []int64{DefaultMPIPolicy().RunAsUser, 0} {
		policy := DefaultMPIPolicy()
		policy.RunAsUser = user
		for _, rj := range replicatedJobsOf(t, RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun"}, Pod: PodOptions{Image: "mpi:1"}, MPI: &policy}) {
			pod := rj.Template.Spec.Template.Spec
			if c := pod.Containers[0].SecurityContext; c == nil || c.RunAsUser == nil || *c.RunAsUser != user {
				t.Errorf("user %d: %s's container runs with %+v", user, rj.Name, c)
			}
			var group *int64
			if pod.SecurityContext != nil {
				group = pod.SecurityContext.FSGroup
			}
			if (user == 0) != (group == nil) || group != nil && *group != user {
				t.Errorf("user %d: %s's pod has fsGroup %v", user, rj.Name, group)
			}
		}
	}
	if DefaultMPIPolicy().RunAsUser == 0 || !strings.HasPrefix(DefaultMPIPolicy().SSHAuthMountPath, "/home/") {
		t.Errorf("the default MPI policy %+v runs as root", DefaultMPIPolicy())
	}
}

// A runtime made as Trainer's own is, its nodes' command split into command and args, reads back
// as the one command it runs.
func TestReadRuntimeJoinsTheNodesCommandAndArgs(t *testing.T) {
	obj, err := NewRuntime(RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun"}, Pod: PodOptions{Image: "mpi:1"}})
	if err != nil {
		t.Fatal(err)
	}
	var r trainingRuntime
	if err := fromUnstructured(obj, &r); err != nil {
		t.Fatal(err)
	}
	for i := range r.Spec.Template.Spec.ReplicatedJobs {
		if rj := &r.Spec.Template.Spec.ReplicatedJobs[i]; rj.Name == TrainerNode {
			c := &rj.Template.Spec.Template.Spec.Containers[0]
			c.Command, c.Args = []string{"/usr/sbin/sshd"}, []string{"-De", "-f", "/home/mpiuser/.sshd_config"}
		}
	}
	if obj, err = toUnstructured(&r); err != nil {
		t.Fatal(err)
	}
	s, err := ReadRuntime(obj)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"}; !slices.Equal(s.MPI.NodeCommand, want) {
		t.Errorf("node command %q, want %q", s.MPI.NodeCommand, want)
	}
}

// A runtime's topology requests are Kueue's pod-set annotations on its replicated jobs'
// templates, which Trainer copies into the JobSet of every TrainJob made from it and Kueue reads
// there: the pods the placement and admission checks see of a TrainJob carry them. They read
// back; a replicated job the runtime does not have, or one role in both, is refused.
func TestRuntimeTopologyIsOnItsReplicatedJobsAndTheTrainJobsPods(t *testing.T) {
	spec := RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun", "t.py"}, MPI: ptr.To(DefaultMPIPolicy()),
		Pod: PodOptions{Image: "mpi:1", RequiredTopology: map[string]string{"node": "example.com/block"},
			PreferredTopology: map[string]string{"launcher": "example.com/rack"}}}
	obj, err := NewRuntime(spec)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadRuntime(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Pod.RequiredTopology, spec.Pod.RequiredTopology) || !reflect.DeepEqual(back.Pod.PreferredTopology, spec.Pod.PreferredTopology) {
		t.Errorf("read back required %v preferred %v", back.Pod.RequiredTopology, back.Pod.PreferredTopology)
	}
	job, err := NewTrainJob(TrainJobSpec{Name: "tj", Namespace: "team", Runtime: RuntimeRef{Name: "mpi"}, Nodes: 4, RuntimeJobs: RuntimeJobs(obj)})
	if err != nil {
		t.Fatal(err)
	}
	roles, err := TrainJobRoles(job, obj)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, r := range roles {
		got[r.Role] = r.Template.Annotations
	}
	want := map[string]map[string]string{"node": {RequiredTopologyAnnotation: "example.com/block"}, "launcher": {PreferredTopologyAnnotation: "example.com/rack"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the TrainJob's pods' annotations %v, want %v", got, want)
	}
	for _, bad := range []PodOptions{
		{Image: "x", RequiredTopology: map[string]string{"worker": "example.com/block"}},
		{Image: "x", RequiredTopology: map[string]string{"node": "example.com/block"}, PreferredTopology: map[string]string{"node": "example.com/rack"}},
	} {
		if _, err := NewRuntime(RuntimeSpec{Name: "torch", Framework: FrameworkTorch, Pod: bad}); err == nil {
			t.Errorf("runtime with %v %v made", bad.RequiredTopology, bad.PreferredTopology)
		}
	}
}

// Trainer names an MPI runtime's hostfile for Open MPI 4 alone: its launcher is also given
// PRRTE's name for it, which Open MPI 5's mpirun reads, unless the runtime's env sets it.
func TestAnMPIRuntimesLauncherNamesTheHostfileForOpenMPI5(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{nil, []string{"/etc/mpi/hostfile"}},
		{map[string]string{"PRTE_MCA_prte_default_hostfile": "/opt/hosts"}, []string{"/opt/hosts"}},
	} {
		spec := RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun"}, Pod: PodOptions{Image: "mpi:1", Env: tc.env},
			MPI: ptr.To(DefaultMPIPolicy())}
		for _, rj := range replicatedJobsOf(t, spec) {
			var got []string
			for _, e := range rj.Template.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "PRTE_MCA_prte_default_hostfile" {
					got = append(got, e.Value)
				}
			}
			want := tc.want
			if rj.Name == TrainerNode && tc.env == nil {
				want = nil // the nodes run no mpirun
			}
			if !slices.Equal(got, want) {
				t.Errorf("env %v: the %s's PRTE_MCA_prte_default_hostfile is %v, want %v", tc.env, rj.Name, got, want)
			}
		}
	}
}

// replicatedJobsOf is the replicated jobs of the runtime spec builds.
func replicatedJobsOf(t *testing.T, spec RuntimeSpec) []replicatedJob {
	t.Helper()
	obj, err := NewRuntime(spec)
	if err != nil {
		t.Fatal(err)
	}
	var r trainingRuntime
	if err := fromUnstructured(obj, &r); err != nil {
		t.Fatal(err)
	}
	return r.Spec.Template.Spec.ReplicatedJobs
}

// A TrainingRuntime's write-only variables are its namespace's Secret, which every pod of the
// jobs made from it takes whole (the MPI launcher and nodes alike); the runtime records the
// version and reads it back. A ClusterTrainingRuntime's jobs run in every namespace, where no one
// Secret is: refused.
func TestARuntimesWriteOnlyVariables(t *testing.T) {
	for _, framework := range []string{FrameworkTorch, FrameworkMPI} {
		spec := RuntimeSpec{Name: "rt", Namespace: "team", Framework: framework, Command: []string{"run"},
			Pod: PodOptions{Image: "img:1", WriteOnlyEnv: &WriteOnlyEnv{Secret: WriteOnlyEnvSecret("rt"), Version: 3}}}
		if framework == FrameworkMPI {
			spec.MPI = ptr.To(DefaultMPIPolicy())
		}
		obj, err := NewRuntime(spec)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := obj.MarshalJSON()
		if n := strings.Count(string(raw), `"secretRef":{"name":"rt-write-only-env"}`); n != len(RuntimeJobs(obj)) {
			t.Errorf("%s: %d pod templates take the Secret, want each of %d:\n%s", framework, n, len(RuntimeJobs(obj)), raw)
		}
		back, err := ReadRuntime(obj)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Pod.WriteOnlyEnv, spec.Pod.WriteOnlyEnv) || len(back.Pod.EnvFromSecrets) != 0 {
			t.Errorf("%s: read back %+v, whole Secrets %v", framework, back.Pod.WriteOnlyEnv, back.Pod.EnvFromSecrets)
		}
	}
	_, err := NewRuntime(RuntimeSpec{Name: "rt", Framework: FrameworkTorch, Pod: PodOptions{WriteOnlyEnv: &WriteOnlyEnv{Secret: "rt-write-only-env", Version: 1}}})
	if err == nil || !strings.Contains(err.Error(), "every namespace") {
		t.Errorf("a ClusterTrainingRuntime with write-only variables: %v", err)
	}
}
