package jobs

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A role's topology request is the annotation Kueue reads on that role's template alone
// (required on the workers, preferred on the master), and reads back as set; a role the job
// lacks, or one both required and preferred, is refused naming the attribute and the role.
func TestTopologyRequestsAnnotateTheirRolesTemplatesAndReadBack(t *testing.T) {
	spec := arenaPyTorchSpec()
	spec.Pod.RequiredTopology = map[string]string{"worker": "example.com/block"}
	spec.Pod.PreferredTopology = map[string]string{"master": "example.com/rack"}
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	w, m := templateOf(t, PyTorch, obj, "worker"), templateOf(t, PyTorch, obj, "master")
	if w.Annotations[RequiredTopologyAnnotation] != "example.com/block" || w.Annotations[PreferredTopologyAnnotation] != "" {
		t.Errorf("the workers' template annotations: %v", w.Annotations)
	}
	if m.Annotations[PreferredTopologyAnnotation] != "example.com/rack" || m.Annotations[RequiredTopologyAnnotation] != "" {
		t.Errorf("the master's template annotations: %v", m.Annotations)
	}
	required, preferred := PyTorch.ReadTopology(obj)
	if diff := cmp.Diff(spec.Pod.RequiredTopology, required); diff != "" {
		t.Errorf("required read back (-set +read):\n%s", diff)
	}
	if diff := cmp.Diff(spec.Pod.PreferredTopology, preferred); diff != "" {
		t.Errorf("preferred read back (-set +read):\n%s", diff)
	}
	plain, _, err := arenaPyTorchSpec().Build()
	if err != nil {
		t.Fatal(err)
	}
	if r, p := PyTorch.ReadTopology(plain); r != nil || p != nil {
		t.Errorf("a job without topology requests reads %v, %v", r, p)
	}

	for _, tc := range []struct {
		required, preferred map[string]string
		attribute, role     string
		want                string
	}{
		{map[string]string{"launcher": "example.com/block"}, nil, "required_topology", "launcher", `this job has no role "launcher"`},
		{map[string]string{"worker": "example.com/block"}, map[string]string{"worker": "example.com/rack"}, "preferred_topology", "worker", "required_topology's already"},
	} {
		bad := arenaPyTorchSpec()
		bad.Pod.RequiredTopology, bad.Pod.PreferredTopology = tc.required, tc.preferred
		_, _, err := bad.Build()
		var perr *PodPatchError
		if !errors.As(err, &perr) || perr.Attribute != tc.attribute || perr.Role != tc.role || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build with required %v, preferred %v: %v; want %s[%s]: %s", tc.required, tc.preferred, err, tc.attribute, tc.role, tc.want)
		}
	}
}

// The scheduling gate Kueue puts on the templates of a job it admits on a topology flavor is
// Kueue's: a job that has it reads no pod patch and nothing unexpressed.
func TestKueuesTopologyGateIsNoPodPatch(t *testing.T) {
	spec := arenaPyTorchSpec()
	spec.Pod.RequiredTopology = map[string]string{"worker": "example.com/block"}
	bare, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	live := bare.DeepCopy()
	for role, template := range PyTorch.templates(live) {
		if err := unstructured.SetNestedSlice(template, []any{map[string]any{"name": KueueTopologyGate}}, "spec", "schedulingGates"); err != nil {
			t.Fatal(role, err)
		}
	}
	if got := PyTorch.ReadPodPatches(live, bare, nil); len(got) != 0 {
		t.Errorf("Kueue's gate reads as pod patches: %v", got)
	}
	for role, template := range PyTorch.templates(live) {
		_ = unstructured.SetNestedSlice(template, []any{map[string]any{"name": "example.com/mine"}}, "spec", "schedulingGates")
		if got := PyTorch.ReadPodPatches(live, bare, nil); !strings.Contains(got[role], "example.com/mine") {
			t.Errorf("a gate of the user's on the %s does not read as its pod patch: %v", role, got)
		}
		break
	}
}
