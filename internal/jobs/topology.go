package jobs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The pod template annotations by which a job asks Kueue's Topology Aware Scheduling to keep a
// role's pods within one domain of a topology level (a node label of a Topology's levels):
// required (Kueue admits the job only where one domain holds them all) or preferred (as few
// domains as it can). Kueue v0.19.2 reads them from each replica's template of an MPIJob, a
// PyTorchJob and a TFJob (pkg/controller/jobframework/tas.go), and from each replicated job's
// template of the JobSet Trainer makes of a TrainJob, which are its runtime's.
const (
	RequiredTopologyAnnotation  = "kueue.x-k8s.io/podset-required-topology"
	PreferredTopologyAnnotation = "kueue.x-k8s.io/podset-preferred-topology"
	// KueueTopologyGate is the scheduling gate Kueue puts on the templates of a job it admits on a
	// topology flavor (pkg/podset), lifted from each pod once it is placed: Kueue's, not the owner's.
	KueueTopologyGate = "kueue.x-k8s.io/topology"
)

// applyTopology sets each role's topology request on its template: required, or preferred
// (a role in both is an error).
func applyTopology(k *Kind, obj *unstructured.Unstructured, required, preferred map[string]string) error {
	if len(required) == 0 && len(preferred) == 0 {
		return nil
	}
	if k.templates == nil {
		return fmt.Errorf("a %s's pod templates are its runtime's: it cannot ask for a topology of its own", k.Object)
	}
	return setTopology(k.templates(obj), required, preferred)
}

// setTopology sets each role's topology request on its template (a job's roles, a runtime's
// replicated jobs).
func setTopology(templates map[string]map[string]any, required, preferred map[string]string) error {
	set := func(annotation string) func(role string, template map[string]any, level string) error {
		return func(role string, template map[string]any, level string) error {
			if _, both := required[role]; both && annotation == PreferredTopologyAnnotation {
				return fmt.Errorf("the %s's topology is required_topology's already; Kueue takes one of them", role)
			}
			annotations, _, _ := unstructured.NestedStringMap(template, "metadata", "annotations")
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[annotation] = level
			return unstructured.SetNestedStringMap(template, annotations, "metadata", "annotations")
		}
	}
	if err := eachRole(templates, "required_topology", required, set(RequiredTopologyAnnotation)); err != nil {
		return err
	}
	return eachRole(templates, "preferred_topology", preferred, set(PreferredTopologyAnnotation))
}

// ReadTopology is each role's topology request on the live job's templates, required and
// preferred (nil where none). Kueue's own annotation of an implied topology (unconstrained) is
// not a request.
func (k *Kind) ReadTopology(live *unstructured.Unstructured) (required, preferred map[string]string) {
	if k.templates == nil {
		return nil, nil
	}
	return readTopology(k.templates(live))
}

// readTopology is each role's topology request on its template, required and preferred.
func readTopology(templates map[string]map[string]any) (required, preferred map[string]string) {
	for role, template := range templates {
		annotations, _, _ := unstructured.NestedStringMap(template, "metadata", "annotations")
		for annotation, into := range map[string]*map[string]string{RequiredTopologyAnnotation: &required, PreferredTopologyAnnotation: &preferred} {
			if level := annotations[annotation]; level != "" {
				if *into == nil {
					*into = map[string]string{}
				}
				(*into)[role] = level
			}
		}
	}
	return required, preferred
}
