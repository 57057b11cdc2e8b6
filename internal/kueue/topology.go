package kueue

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TopologyGVR is the API of Kueue's Topology objects (cluster-scoped).
var TopologyGVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "topologies"}

// HostnameLevel is the node label of the level of single nodes, which Kueue takes only as the
// lowest level.
const HostnameLevel = "kubernetes.io/hostname"

// maxTopologyLevels bounds a Topology's levels in Kueue v0.19.2's CRD.
const maxTopologyLevels = 16

// TopologySpec is a Topology: the levels of a data centre's hierarchy (blocks, racks, hosts),
// each a node label, from the widest to the narrowest.
type TopologySpec struct {
	Name   string
	Levels []string
}

// Check applies the rules Kueue v0.19.2's CRD refuses a Topology for
// (apis/kueue/v1beta2/topology_types.go): 1 to 16 levels, each a label name, unique, and
// kubernetes.io/hostname only as the last.
func (s TopologySpec) Check() error {
	if len(s.Levels) == 0 || len(s.Levels) > maxTopologyLevels {
		return fmt.Errorf("%d levels; Kueue takes 1 to %d", len(s.Levels), maxTopologyLevels)
	}
	seen := map[string]bool{}
	for i, l := range s.Levels {
		if errs := validation.IsQualifiedName(l); len(errs) > 0 {
			return fmt.Errorf("level %d, %q, is not a node label name: %s", i, l, strings.Join(errs, "; "))
		}
		if seen[l] {
			return fmt.Errorf("level %q is given twice; Kueue wants the levels unique", l)
		}
		seen[l] = true
		if l == HostnameLevel && i != len(s.Levels)-1 {
			return fmt.Errorf("level %q is level %d of %d; Kueue takes the kubernetes.io/hostname label only as the lowest (last) level", l, i, len(s.Levels))
		}
	}
	return nil
}

// Build returns the Topology.
func (s TopologySpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("Topology", s.Name, "")
	levels := make([]any, len(s.Levels))
	for i, l := range s.Levels {
		levels[i] = map[string]any{"nodeLabel": l}
	}
	obj.Object["spec"] = map[string]any{"levels": levels}
	return obj, nil
}

// ReadTopology reads a Topology back.
func ReadTopology(obj *unstructured.Unstructured) (TopologySpec, error) {
	s := TopologySpec{Name: obj.GetName()}
	levels, _, err := unstructured.NestedSlice(obj.Object, "spec", "levels")
	if err != nil {
		return s, err
	}
	for _, l := range levels {
		m, ok := l.(map[string]any)
		if !ok {
			return s, fmt.Errorf("a level %T", l)
		}
		s.Levels = append(s.Levels, str(m, "nodeLabel"))
	}
	return s, nil
}
