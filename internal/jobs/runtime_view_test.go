package jobs

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// What a TrainJob gets on a runtime: an MPI runtime's nodes are the job's node count, its
// launcher one pod that waits for them and takes the trainer's settings; a torch runtime's node
// job is the trainer's, of the runtime's count when the job says none. A runtime this provider
// did not make is not called managed.
func TestOfferOfARuntime(t *testing.T) {
	mpi, err := NewRuntime(RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Command: []string{"mpirun", "t.py"},
		MPI: &MPIPolicy{ProcsPerNode: 4, Implementation: "OpenMPI", RunAsUser: 1000}, Pod: PodOptions{Image: "mpi:1", GPUs: 2, GPUResource: DefaultGPUResource},
		GangTimeoutSeconds: ptr.To[int32](90)})
	if err != nil {
		t.Fatal(err)
	}
	offer, err := OfferOf(mpi, 3)
	if err != nil {
		t.Fatal(err)
	}
	if offer.Framework != FrameworkMPI || offer.ProcsPerNode != 4 || !offer.Managed || ptr.Deref(offer.GangTimeoutSeconds, 0) != 90 || len(offer.Jobs) != 2 {
		t.Fatalf("MPI offer %+v", offer)
	}
	node, launcher := offer.Jobs[0], offer.Jobs[1]
	if node.Role != TrainerNode || node.Count != 3 || node.Trainer || len(node.DependsOn) != 0 {
		t.Errorf("MPI node job %s: %d pods, trainer %v, depends on %v", node.Role, node.Count, node.Trainer, node.DependsOn)
	}
	if launcher.Role != "launcher" || launcher.Count != 1 || !launcher.Trainer || !slices.Equal(launcher.DependsOn, []string{"node Ready"}) {
		t.Errorf("MPI launcher job %s: %d pods, trainer %v, depends on %v", launcher.Role, launcher.Count, launcher.Trainer, launcher.DependsOn)
	}
	if gpus := node.Template.Spec.Containers[0].Resources.Limits[DefaultGPUResource]; !gpus.Equal(resource.MustParse("2")) {
		t.Errorf("MPI node GPUs %s, want 2", gpus.String())
	}

	torch, err := NewRuntime(RuntimeSpec{Name: "torch", Framework: FrameworkTorch, Nodes: 2, Command: []string{"torchrun", "t.py"}, Pod: PodOptions{Image: "pytorch:2"}})
	if err != nil {
		t.Fatal(err)
	}
	torch.SetLabels(map[string]string{FrameworkLabel: FrameworkTorch})
	offer, err = OfferOf(torch, 0)
	if err != nil {
		t.Fatal(err)
	}
	if offer.Framework != FrameworkTorch || offer.DefaultNodes != 2 || offer.Managed || len(offer.Jobs) != 1 || offer.Jobs[0].Count != 2 || !offer.Jobs[0].Trainer {
		t.Errorf("torch offer %+v", offer)
	}
	if offer, err = OfferOf(torch, 5); err != nil || offer.Jobs[0].Count != 5 {
		t.Errorf("torch offer of 5 nodes: %+v, %v", offer, err)
	}
}
