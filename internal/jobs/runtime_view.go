package jobs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// RuntimeOffer is what a TrainJob on a runtime gets: the runtime's policy and, for a job of a
// number of nodes, each replicated job Trainer makes of the runtime's JobSet template, with its
// pods.
type RuntimeOffer struct {
	// Framework is FrameworkTorch, FrameworkMPI or FrameworkPlain.
	Framework string
	// DefaultNodes is the runtime's node count (mlPolicy.numNodes), for a job that says none; 0
	// when the runtime says none (Trainer then runs 1).
	DefaultNodes int32
	// ProcsPerNode is an MPI policy's processes per node; 0 when it says none.
	ProcsPerNode int32
	// GangTimeoutSeconds is the coscheduling timeout, when the runtime schedules its pods as a gang.
	GangTimeoutSeconds *int32
	// Managed says whether this provider made the runtime.
	Managed bool
	Jobs    []OfferedJob
}

// OfferedJob is one replicated job of a runtime, as a job of the offer's nodes gets it.
type OfferedJob struct {
	RolePods
	// Trainer says whether the TrainJob's trainer settings (image, command, env, resources per
	// node) go to it.
	Trainer bool
	// DependsOn are the replicated jobs it waits for, each as "NAME STATUS" (JobSet's dependsOn).
	DependsOn []string
}

// OfferOf is what a TrainJob of nodes nodes (0: as many as the runtime says, or 1) gets on the
// runtime, as Trainer v2.3.0 makes its JobSet (TrainJobRoles).
func OfferOf(runtime *unstructured.Unstructured, nodes int32) (RuntimeOffer, error) {
	var rt trainingRuntime
	if err := fromUnstructured(runtime, &rt); err != nil {
		return RuntimeOffer{}, err
	}
	spec, err := ReadRuntime(runtime)
	if err != nil {
		return RuntimeOffer{}, err
	}
	offer := RuntimeOffer{Framework: spec.Framework, DefaultNodes: spec.Nodes, GangTimeoutSeconds: spec.GangTimeoutSeconds,
		Managed: runtime.GetLabels()[ManagedByLabel] == ManagedByValue}
	if spec.MPI != nil {
		offer.ProcsPerNode = spec.MPI.ProcsPerNode
	}
	if nodes <= 0 {
		nodes = max(offer.DefaultNodes, 1)
	}
	job, err := toUnstructured(&trainJob{Spec: trainJobSpec{Trainer: &trainer{NumNodes: ptr.To(nodes)}}})
	if err != nil {
		return RuntimeOffer{}, err
	}
	roles, err := TrainJobRoles(job, runtime)
	if err != nil {
		return RuntimeOffer{}, err
	}
	if len(roles) != len(rt.Spec.Template.Spec.ReplicatedJobs) {
		return RuntimeOffer{}, fmt.Errorf("the runtime's %d replicated jobs made %d roles", len(rt.Spec.Template.Spec.ReplicatedJobs), len(roles))
	}
	for i, rj := range rt.Spec.Template.Spec.ReplicatedJobs {
		j := OfferedJob{RolePods: roles[i], Trainer: rj.Template.Metadata != nil && rj.Template.Metadata.Labels[ancestorLabel] == "trainer"}
		for _, d := range rj.DependsOn {
			j.DependsOn = append(j.DependsOn, d.Name+" "+d.Status)
		}
		offer.Jobs = append(offer.Jobs, j)
	}
	return offer, nil
}
