package kueue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FlavorSpec is a ResourceFlavor: the nodes a quota stands for (their labels and taints) and
// the tolerations Kueue adds to the pods it admits onto them.
type FlavorSpec struct {
	Name        string
	NodeLabels  map[string]string
	NodeTaints  []corev1.Taint
	Tolerations []corev1.Toleration
	// Topology names the Topology of its nodes, for Topology Aware Scheduling; "" for none.
	Topology string
}

// maxFlavorItems bounds a ResourceFlavor's node labels, node taints and tolerations in Kueue
// v0.19.2's CRD (apis/kueue/v1beta2/resourceflavor_types.go).
const maxFlavorItems = 8

// Check applies the rules Kueue v0.19.2 refuses a ResourceFlavor for: its CRD's bounds and CEL
// rules, and its webhook's unique taints.
func (s FlavorSpec) Check() error {
	if len(s.NodeLabels) > maxFlavorItems || len(s.NodeTaints) > maxFlavorItems || len(s.Tolerations) > maxFlavorItems {
		return fmt.Errorf("%d node_labels, %d node_taints and %d tolerations; Kueue takes at most %d of each",
			len(s.NodeLabels), len(s.NodeTaints), len(s.Tolerations), maxFlavorItems)
	}
	if s.Topology != "" && len(s.NodeLabels) == 0 {
		return fmt.Errorf("topology_name %q needs node_labels: Kueue wants at least one node label on a flavor with a topology", s.Topology)
	}
	seen := map[string]bool{}
	for _, t := range s.NodeTaints {
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("node taint %s: Kueue takes the effects NoSchedule, PreferNoSchedule and NoExecute, not %q", t.ToString(), t.Effect)
		}
		key := t.Key + ":" + string(t.Effect)
		if seen[key] {
			return fmt.Errorf("node taints: two of key %q and effect %s; Kueue wants them unique by key and effect", t.Key, t.Effect)
		}
		seen[key] = true
	}
	return nil
}

// Build returns the ResourceFlavor.
func (s FlavorSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("ResourceFlavor", s.Name, "")
	spec := map[string]any{}
	if len(s.NodeLabels) > 0 {
		spec["nodeLabels"] = stringMap(s.NodeLabels)
	}
	if len(s.NodeTaints) > 0 {
		spec["nodeTaints"] = toJSON(s.NodeTaints)
	}
	if len(s.Tolerations) > 0 {
		spec["tolerations"] = toJSON(s.Tolerations)
	}
	if s.Topology != "" {
		spec["topologyName"] = s.Topology
	}
	obj.Object["spec"] = spec
	return obj, nil
}

// ReadFlavor reads a ResourceFlavor back.
func ReadFlavor(obj *unstructured.Unstructured) (FlavorSpec, error) {
	s := FlavorSpec{Name: obj.GetName()}
	labels, _, err := unstructured.NestedStringMap(obj.Object, "spec", "nodeLabels")
	if err != nil {
		return s, err
	}
	s.NodeLabels = labels
	s.Topology, _, _ = unstructured.NestedString(obj.Object, "spec", "topologyName")
	if err := fromJSON(obj.Object, &s.NodeTaints, "spec", "nodeTaints"); err != nil {
		return s, err
	}
	if err := fromJSON(obj.Object, &s.Tolerations, "spec", "tolerations"); err != nil {
		return s, err
	}
	return s, nil
}
