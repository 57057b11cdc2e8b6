package jobs

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func service(name string, port int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": "default", "annotations": map[string]any{"note": "x"}},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": port}}},
	}}
}

func TestStampRequestTellsOwnLeftoversFromOtherObjects(t *testing.T) {
	desired := service("job-etcd", 2379)
	if err := StampRequest(desired); err != nil {
		t.Fatal(err)
	}
	if !IsManaged(desired) {
		t.Fatal("a stamped object is not labelled as managed by this provider")
	}
	again := desired.DeepCopy()
	if err := StampRequest(again); err != nil {
		t.Fatal(err)
	}
	if !SameRequest(again, desired) {
		t.Error("stamping twice changed the hash")
	}

	// What the API server returns has more fields; the recorded hash still matches.
	existing := desired.DeepCopy()
	existing.SetUID("1234")
	existing.SetResourceVersion("99")
	if !SameRequest(existing, desired) {
		t.Error("the provider's own object, as read back, is not recognised")
	}

	other := service("job-etcd", 2380)
	if err := StampRequest(other); err != nil {
		t.Fatal(err)
	}
	if SameRequest(other, desired) {
		t.Error("an object created from another configuration is taken for this one")
	}

	foreign := existing.DeepCopy()
	foreign.SetLabels(nil)
	if SameRequest(foreign, desired) {
		t.Error("an object without the managed-by label is taken for this provider's")
	}
	if SameRequest(existing, service("job-etcd", 2379)) {
		t.Error("an unstamped request matches")
	}
}
