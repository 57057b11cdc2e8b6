package jobs

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func trainSpec() TrainJobSpec {
	return TrainJobSpec{
		Name: "tj", Namespace: "team",
		Runtime: RuntimeRef{Name: "torch", Kind: ClusterTrainingRuntimeKind},
		Pod: PodOptions{Image: "pytorch:2", GPUs: 1, GPUResource: DefaultGPUResource, CPU: "4", Env: map[string]string{"EPOCHS": "3"},
			SecretEnv:    map[string]SecretKey{"TOKEN": {Secret: "hf", Key: "token"}},
			Tolerations:  []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}},
			NodeSelector: map[string]string{"accelerator": "a100"}, Labels: map[string]string{"team": "vision"},
			DataVolumes: []DataVolume{{Claim: "data", MountPath: "/data"}}, ServiceAccountName: "trainer"},
		Command: []string{"torchrun", "train.py"}, Args: []string{"--lr", "0.1"}, Nodes: 2, ProcsPerNode: 4,
		RuntimeJobs: []RuntimeJob{{Name: "node", Containers: []string{"node"}}},
	}
}

// The TrainJob carries the trainer's settings in spec.trainer and the placement in this
// provider's own runtime patch, on every replicated job of the runtime; reading it gives the
// spec back.
func TestTrainJobRoundTrip(t *testing.T) {
	spec := trainSpec()
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "trainer", "numNodes"); n != 2 {
		t.Errorf("numNodes %d", n)
	}
	gpu, _, _ := unstructured.NestedString(obj.Object, "spec", "trainer", "resourcesPerNode", "limits", "nvidia.com/gpu")
	if gpu != "1" {
		t.Errorf("resourcesPerNode gpu %q", gpu)
	}
	patches, _, _ := unstructured.NestedSlice(obj.Object, "spec", "runtimePatches")
	if p, _ := patches[0].(map[string]any); len(patches) != 1 || p["manager"] != RuntimePatchManager {
		t.Fatalf("runtimePatches %v", patches)
	}
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	spec.RuntimeJobs = nil
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("read back\n%+v\nwant\n%+v", back, spec)
	}

	// Placement on every replicated job; the volume's mount only where the trainer's container is.
	spec.RuntimeJobs = []RuntimeJob{{Name: "node", Containers: []string{"node"}}, {Name: "launcher", Containers: []string{"node"}}, {Name: "dataset-initializer", Containers: []string{"dataset-initializer"}}}
	obj, err = NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "runtimePatches")
	patch, _ := jobs[0].(map[string]any)
	rjs, _, _ := unstructured.NestedSlice(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
	if len(rjs) != 3 {
		t.Fatalf("replicated job patches %v", rjs)
	}
	for _, rj := range rjs {
		m, _ := rj.(map[string]any)
		tol, _, _ := unstructured.NestedSlice(m, "template", "spec", "template", "spec", "tolerations")
		containers, _, _ := unstructured.NestedSlice(m, "template", "spec", "template", "spec", "containers")
		if len(tol) != 1 {
			t.Errorf("%s: tolerations %v", m["name"], tol)
		}
		if (m["name"] == "dataset-initializer") != (len(containers) == 0) {
			t.Errorf("%s: container patches %v", m["name"], containers)
		}
	}
}

// A queued job's suspension is Kueue's, and Kueue's own runtime patch is not the configuration.
func TestReadTrainJobQueued(t *testing.T) {
	spec := trainSpec()
	spec.QueueName = "team-a"
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(obj.Object, true, "spec", "suspend")
	patches, _, _ := unstructured.NestedSlice(obj.Object, "spec", "runtimePatches")
	patches = append([]any{map[string]any{"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"replicatedJobs": []any{map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeSelector": map[string]any{"flavor": "gpu"}}}}}}}}}}}}, patches...)
	_ = unstructured.SetNestedSlice(obj.Object, patches, "spec", "runtimePatches")
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if back.Suspend || back.QueueName != "team-a" || !reflect.DeepEqual(back.Pod.NodeSelector, spec.Pod.NodeSelector) {
		t.Errorf("read %+v", back)
	}
}

func TestTrainJobRefusesWhatTheAPICannotSay(t *testing.T) {
	for name, mutate := range map[string]func(*TrainJobSpec){
		"no nodes":       func(s *TrainJobSpec) { s.Nodes = 0 },
		"envFrom":        func(s *TrainJobSpec) { s.Pod.EnvFromSecrets = []string{"s"} },
		"priority class": func(s *TrainJobSpec) { s.Pod.PriorityClassName = "high" },
		"pull policy":    func(s *TrainJobSpec) { s.Pod.ImagePullPolicy = corev1.PullAlways },
	} {
		s := trainSpec()
		mutate(&s)
		if _, err := NewTrainJob(s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTrainJobStatus(t *testing.T) {
	obj, err := NewTrainJob(trainSpec())
	if err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	pod := func(name, phase string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ReplicatedJobLabel: "node", jobCompletionIndexLabel: name[len(name)-1:]}},
			Spec: corev1.PodSpec{NodeName: "n-" + name}, Status: corev1.PodStatus{Phase: corev1.PodPhase(phase), StartTime: &start}}
	}
	for _, c := range []struct {
		name   string
		status map[string]any
		pods   []corev1.Pod
		want   string
	}{
		{"no status yet", nil, nil, Pending},
		{"pods not ready", map[string]any{"jobsStatus": []any{map[string]any{"name": "node", "active": int64(1), "ready": int64(0)}}}, []corev1.Pod{pod("p0", "Pending")}, Pending},
		{"ready", map[string]any{"jobsStatus": []any{map[string]any{"name": "node", "active": int64(1), "ready": int64(1)}}}, []corev1.Pod{pod("p1", "Running"), pod("p0", "Running")}, Running},
		{"launcher waits for the nodes", map[string]any{"jobsStatus": []any{
			map[string]any{"name": "node", "active": int64(1), "ready": int64(1)}, map[string]any{"name": "launcher", "active": int64(0), "ready": int64(0)}}}, nil, Pending},
		{"complete", map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "x", "message": "done"}}}, nil, Succeeded},
		{"failed", map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "True", "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "DeadlineExceeded", "message": "too long"}}}, nil, Failed},
		{"suspended", map[string]any{"conditions": []any{map[string]any{"type": "Suspended", "status": "True", "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "Suspended", "message": "x"}}}, nil, Suspended},
	} {
		o := obj.DeepCopy()
		if c.status != nil {
			o.Object["status"] = c.status
		}
		s, err := Train.Status(Observed{Object: o, Pods: c.pods}, start.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase != c.want {
			t.Errorf("%s: %s, want %s", c.name, s.Phase, c.want)
		}
		if len(c.pods) == 2 && (s.Instances[0].Name != "p0" || s.Instances[0].Node != "n-p0" || s.Instances[1].Index != 1 || s.Duration != time.Hour) {
			t.Errorf("%s: instances %+v, duration %s", c.name, s.Instances, s.Duration)
		}
		if c.want == Failed && !strings.Contains(Train.Failure(Observed{Object: o}), "DeadlineExceeded: too long") {
			t.Errorf("failure %q", Train.Failure(Observed{Object: o}))
		}
	}
	if got := (TrainJobSpec{Nodes: 3, RuntimeJobs: []RuntimeJob{{Name: "node"}}}).Expect(); !reflect.DeepEqual(got, map[string]int{"node": 3}) {
		t.Errorf("expect %v", got)
	}
	if got := (TrainJobSpec{Nodes: 3, RuntimeJobs: []RuntimeJob{{Name: "node"}, {Name: "launcher"}}}).Expect(); got != nil {
		t.Errorf("expect with a launcher %v", got)
	}
}

func TestRuntimeRoundTrip(t *testing.T) {
	for _, spec := range []RuntimeSpec{
		{Name: "torch", Framework: FrameworkTorch, Nodes: 2, Command: []string{"torchrun", "train.py"}, GangTimeoutSeconds: ptr.To[int32](60),
			Pod: PodOptions{Image: "pytorch:2", GPUs: 1, GPUResource: DefaultGPUResource, Tolerations: []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}}},
		{Name: "mpi", Namespace: "team", Framework: FrameworkMPI, Labels: map[string]string{"tier": "gold"}, Command: []string{"mpirun", "python", "t.py"},
			MPI: ptr.To(DefaultMPIPolicy()), Pod: PodOptions{Image: "horovod:1", NodeSelector: map[string]string{"ssd": "true"}}},
		{Name: "mpi-root", Framework: FrameworkMPI, Command: []string{"mpirun", "t.py"},
			MPI: &MPIPolicy{ProcsPerNode: 2, Implementation: "OpenMPI", SSHAuthMountPath: "/root/.ssh", RunLauncherAsNode: true, NodeCommand: []string{"/usr/sbin/sshd", "-De"}},
			Pod: PodOptions{Image: "mpi:1"}},
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
		obj, err := NewRuntime(RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun"}, Pod: PodOptions{Image: "mpi:1"}, MPI: &policy})
		if err != nil {
			t.Fatal(err)
		}
		var r trainingRuntime
		if err := fromUnstructured(obj, &r); err != nil {
			t.Fatal(err)
		}
		for _, rj := range r.Spec.Template.Spec.ReplicatedJobs {
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

func TestTrainJobRoles(t *testing.T) {
	nodes := seedNodes()
	gpuNode := corev1.Toleration{Key: "gpu_node", Operator: corev1.TolerationOpExists}
	torch, err := NewRuntime(RuntimeSpec{Name: "torch", Framework: FrameworkTorch, Command: []string{"torchrun"},
		Pod: PodOptions{Image: "pytorch:2", CPU: "2", Tolerations: []corev1.Toleration{{Key: "ssd_node", Operator: corev1.TolerationOpExists}},
			NodeSelector: map[string]string{"nvidia.com/gpu.present": "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	job := func(runtime *unstructured.Unstructured, nodes int32, gpus int64, tolerations []corev1.Toleration, selector map[string]string) *unstructured.Unstructured {
		obj, err := NewTrainJob(TrainJobSpec{Name: "tj", Namespace: "team", Runtime: RuntimeRef{Name: runtime.GetName()}, Nodes: nodes,
			Pod: PodOptions{GPUs: gpus, GPUResource: DefaultGPUResource, Tolerations: tolerations, NodeSelector: selector}, RuntimeJobs: RuntimeJobs(runtime)})
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	roles, err := TrainJobRoles(job(torch, 3, 2, []corev1.Toleration{gpuNode}, map[string]string{"zone": "a"}), torch)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 1 || roles[0].Role != TrainerNode || roles[0].Count != 3 {
		t.Fatalf("roles %+v, want node x 3", roles)
	}
	pod := roles[0].Template.Spec
	if !reflect.DeepEqual(pod.Tolerations, []corev1.Toleration{gpuNode}) {
		t.Errorf("tolerations %v: the job's replace the runtime's", pod.Tolerations)
	}
	if want := map[string]string{"nvidia.com/gpu.present": "true", "zone": "a"}; !reflect.DeepEqual(pod.NodeSelector, want) {
		t.Errorf("node selector %v, want %v", pod.NodeSelector, want)
	}
	limits := pod.Containers[0].Resources.Limits
	if gpus, cpu := limits[DefaultGPUResource], limits[corev1.ResourceCPU]; gpus.String() != "2" || cpu.String() != "2" {
		t.Errorf("limits %v: want the job's 2 GPUs over the runtime's 2 CPUs", limits)
	}

	// On the seed's nodes: no GPU node has zone=a; without that selector the job fits.
	if w := CheckPlacement(roles, nodes, PlacementOptions{}); len(w) != 1 || !strings.Contains(w[0].Message, "zone=a") {
		t.Errorf("warnings %v, want one naming the node selector zone=a", w)
	}
	roles, err = TrainJobRoles(job(torch, 2, 1, []corev1.Toleration{gpuNode}, nil), torch)
	if err != nil {
		t.Fatal(err)
	}
	if w := CheckPlacement(roles, nodes, PlacementOptions{}); len(w) != 0 {
		t.Errorf("warnings %v, want none", w)
	}
	// A job without tolerations keeps the runtime's: ssd_node, whose node has the GPUs.
	roles, err = TrainJobRoles(job(torch, 2, 1, nil, nil), torch)
	if err != nil {
		t.Fatal(err)
	}
	if w := CheckPlacement(roles, nodes, PlacementOptions{}); len(w) != 0 || roles[0].Template.Spec.Tolerations[0].Key != "ssd_node" {
		t.Errorf("warnings %v, tolerations %v: want none, and the runtime's ssd_node", w, roles[0].Template.Spec.Tolerations)
	}
	// On a runtime that tolerates nothing, a GPU job that tolerates nothing fits no node.
	bare, err := NewRuntime(RuntimeSpec{Name: "bare", Framework: FrameworkTorch, Pod: PodOptions{Image: "pytorch:2"}})
	if err != nil {
		t.Fatal(err)
	}
	roles, err = TrainJobRoles(job(bare, 2, 1, nil, nil), bare)
	if err != nil {
		t.Fatal(err)
	}
	if w := CheckPlacement(roles, nodes, PlacementOptions{}); len(w) != 1 || !strings.Contains(w[0].Message, "gpu_node") {
		t.Errorf("warnings %v, want one naming the gpu_node taint", w)
	}

	// An MPI runtime: one launcher, and the job's node count of nodes (one fewer when the
	// launcher is a node).
	for _, asNode := range []bool{false, true} {
		mpi, err := NewRuntime(RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun"}, Pod: PodOptions{Image: "mpi:1"},
			MPI: &MPIPolicy{RunLauncherAsNode: asNode}})
		if err != nil {
			t.Fatal(err)
		}
		roles, err := TrainJobRoles(job(mpi, 4, 0, nil, nil), mpi)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"launcher": 1, "node": 4}
		if asNode {
			want["node"] = 3
		}
		got := map[string]int{}
		for _, r := range roles {
			got[r.Role] = r.Count
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("run launcher as node %v: roles %v, want %v", asNode, got, want)
		}
	}
}

// JobSet refuses the JobSet of a TrainJob whose longest pod name, NAME-JOB-0-PODINDEX-xxxxx,
// exceeds 63 characters: on Trainer's torch runtime, a job of 2 nodes may have a name of 48
// characters (48 + len("-node-0-1-xxxxx") = 63), of 11 nodes 47; on an MPI runtime the launcher
// (8 letters) bounds it at 44.
func TestCheckTrainJobNameAsJobSetsWebhookCountsPodNames(t *testing.T) {
	torch, err := NewRuntime(RuntimeSpec{Name: "torch", Framework: FrameworkTorch, Command: []string{"torchrun"}, Pod: PodOptions{Image: "pytorch:2"}})
	if err != nil {
		t.Fatal(err)
	}
	mpi, err := NewRuntime(RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun"}, Pod: PodOptions{Image: "mpi:1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		runtime *unstructured.Unstructured
		nodes   int32
		longest int
	}{{torch, 2, 48}, {torch, 10, 48}, {torch, 11, 47}, {mpi, 2, 44}} {
		for _, n := range []int{tc.longest, tc.longest + 1} {
			name := "j" + strings.Repeat("a", n-1)
			obj, err := NewTrainJob(TrainJobSpec{Name: name, Namespace: "team", Runtime: RuntimeRef{Name: tc.runtime.GetName()}, Nodes: tc.nodes,
				RuntimeJobs: RuntimeJobs(tc.runtime)})
			if err != nil {
				t.Fatal(err)
			}
			roles, err := TrainJobRoles(obj, tc.runtime)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckTrainJobName(name, roles)
			if ok := n <= tc.longest; ok != (err == nil) {
				t.Errorf("%s runtime, %d nodes, a name of %d: %v", tc.runtime.GetName(), tc.nodes, n, err)
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("at most %d", tc.longest)) {
				t.Errorf("the error does not give the limit %d: %v", tc.longest, err)
			}
		}
	}
}

// A TrainJob's labels and annotations are its object's (Trainer lets them change); the pods'
// are in this provider's runtime patch (immutable while the job runs). Each reads back as its own.
func TestTrainJobLabelsAreTheObjectsAndPodLabelsThePatchs(t *testing.T) {
	spec := TrainJobSpec{Name: "tj", Namespace: "team", Runtime: RuntimeRef{Name: "torch", Kind: ClusterTrainingRuntimeKind}, Nodes: 2,
		Labels: map[string]string{"team": "vision"}, Annotations: map[string]string{"owner": "ana"},
		Pod: PodOptions{Image: "pytorch:2", Labels: map[string]string{"tier": "gold"}, Annotations: map[string]string{"sidecar": "off"}}}
	obj, err := NewTrainJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetLabels()["team"] != "vision" || obj.GetLabels()["tier"] != "" || obj.GetAnnotations()["owner"] != "ana" || obj.GetAnnotations()["sidecar"] != "" {
		t.Errorf("object labels %v annotations %v: want the job's only", obj.GetLabels(), obj.GetAnnotations())
	}
	var job trainJob
	if err := fromUnstructured(obj, &job); err != nil {
		t.Fatal(err)
	}
	p := ownPodPatch(job.Spec.RuntimePatches)
	if p == nil || p.Metadata == nil || p.Metadata.Labels["tier"] != "gold" || p.Metadata.Labels["team"] != "" || p.Metadata.Annotations["sidecar"] != "off" {
		t.Fatalf("runtime patch metadata %+v: want the pods' only", p)
	}
	back, err := ReadTrainJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Labels, spec.Labels) || !reflect.DeepEqual(back.Annotations, spec.Annotations) ||
		!reflect.DeepEqual(back.Pod.Labels, spec.Pod.Labels) || !reflect.DeepEqual(back.Pod.Annotations, spec.Pod.Annotations) {
		t.Errorf("read back labels %v %v, pods' %v %v", back.Labels, back.Annotations, back.Pod.Labels, back.Pod.Annotations)
	}
}
