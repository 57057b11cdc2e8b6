package jobs

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

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
