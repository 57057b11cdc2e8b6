package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Arena's `submit pytorch --workers 3 --gpus 2 --toleration gpu_node`: a master and two workers.
func arenaPyTorchSpec() PyTorchJobSpec {
	gpu, _ := ParseToleration("gpu_node")
	return PyTorchJobSpec{
		Name: "pt-dist", Namespace: "default",
		Pod:          PodOptions{Image: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", GPUs: 2, GPUResource: DefaultGPUResource, Tolerations: []corev1.Toleration{gpu}},
		Command:      []string{"torchrun", "/workspace/train.py"},
		Workers:      2,
		ProcsPerNode: 2,
		RunPolicy:    RunPolicy{CleanPodPolicy: "Running", BackoffLimit: ptr.To[int32](3)},
	}
}

func TestNewPyTorchJob(t *testing.T) {
	for _, elastic := range []*PyTorchElastic{nil, {MinWorkers: 1, MaxWorkers: 4, RendezvousBackend: "c10d", MaxRestarts: ptr.To[int32](3)}} {
		spec := arenaPyTorchSpec()
		spec.Elastic = elastic
		obj, err := NewPyTorchJob(spec)
		if err != nil {
			t.Fatal(err)
		}
		var job pytorchJob
		if err := fromUnstructured(obj, &job); err != nil {
			t.Fatal(err)
		}
		roles := map[string]int32{}
		for role, r := range job.Spec.PyTorchReplicaSpecs {
			roles[role] = *r.Replicas
			c := r.Template.Spec.Containers[0]
			if c.Name != "pytorch" || len(c.Ports) != 1 || c.Ports[0].Name != "pytorchjob-port" || c.Ports[0].ContainerPort != PyTorchPort {
				t.Errorf("%s container %s ports %v: training-operator finds the master and rendezvous port by name", role, c.Name, c.Ports)
			}
		}
		want := map[string]int32{"Master": 1, "Worker": 2}
		if elastic != nil {
			// No master: it would give every pod a fixed WORLD_SIZE.
			want = map[string]int32{"Worker": 2}
		}
		if diff := cmp.Diff(want, roles); diff != "" {
			t.Errorf("elastic=%v: replicas (-want +got):\n%s", elastic != nil, diff)
		}
		if got := ptr.Deref(job.Spec.NprocPerNode, ""); got != "2" {
			t.Errorf("nprocPerNode %q", got)
		}
		read, err := ReadPyTorchJob(obj)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(spec, read); diff != "" {
			t.Errorf("ReadPyTorchJob(NewPyTorchJob(spec)) (-want +got):\n%s", diff)
		}
		if n, err := PyTorch.Workers(obj); err != nil || n != 2 {
			t.Errorf("Workers = %d, %v", n, err)
		}
	}
	if got := arenaPyTorchSpec().Expect(); !cmp.Equal(got, map[string]int{"master": 1, "worker": 2}) {
		t.Errorf("Expect = %v", got)
	}
}

func TestPyTorchRendezvous(t *testing.T) {
	for _, c := range []struct {
		backend, endpoint string
		ok                bool
	}{
		{"", "", true}, {"c10d", "", true}, {"etcd-v2", "etcd.ml:2379", true},
		{"etcd", "", false}, {"c10d", "no-port", false}, {"c10d", "host:0", false},
	} {
		if err := CheckRendezvous(c.backend, c.endpoint); (err == nil) != c.ok {
			t.Errorf("CheckRendezvous(%q, %q) = %v", c.backend, c.endpoint, err)
		}
	}
	spec := arenaPyTorchSpec()
	spec.Elastic = &PyTorchElastic{MinWorkers: 1, MaxWorkers: 4, RendezvousBackend: "etcd-v2", RendezvousEndpoint: "etcd.ml:2379"}
	obj, err := NewPyTorchJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadPyTorchJob(obj)
	if err != nil || read.Elastic.RendezvousEndpoint != "etcd.ml:2379" {
		t.Errorf("endpoint read back as %+v (%v)", read.Elastic, err)
	}
	spec.Workers = 5
	if _, err := NewPyTorchJob(spec); err == nil {
		t.Error("5 workers outside 1..4 must be refused")
	}
}
