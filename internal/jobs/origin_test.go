package jobs

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// service is an elastic job's etcd Service on port.
func service(port int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "job-etcd", "namespace": "default", "annotations": map[string]any{"note": "x"}},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": port}}},
	}}
}

func TestStampRequestTellsOwnLeftoversFromOtherObjects(t *testing.T) {
	desired := service(2379)
	if err := StampRequest(desired, "create-1"); err != nil {
		t.Fatal(err)
	}
	if !IsManaged(desired) {
		t.Fatal("a stamped object is not labelled as managed by this provider")
	}
	again := desired.DeepCopy()
	if err := StampRequest(again, "create-1"); err != nil {
		t.Fatal(err)
	}
	if !SameRequest(again, desired) || !SameCreate(again, desired) {
		t.Error("stamping twice changed the hash")
	}
	// Another apply's create of the same configuration: the same request, not the same create.
	another := service(2379)
	if err := StampRequest(another, "create-2"); err != nil {
		t.Fatal(err)
	}
	if !SameRequest(another, desired) || SameCreate(another, desired) {
		t.Error("another create of the same request must hash alike and be told apart by its create ID")
	}
	if _, user := userAnnotations(another.GetAnnotations())[CreateIDAnnotation]; user {
		t.Error("the create ID is taken for a user's annotation")
	}

	// What the API server returns has more fields; the recorded hash still matches.
	existing := desired.DeepCopy()
	existing.SetUID("1234")
	existing.SetResourceVersion("99")
	if !SameRequest(existing, desired) {
		t.Error("the provider's own object, as read back, is not recognised")
	}

	other := service(2380)
	if err := StampRequest(other, "create-1"); err != nil {
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
	if SameRequest(existing, service(2379)) {
		t.Error("an unstamped request matches")
	}
}

// Labels and annotations that tools and controllers write are not imported as the user's;
// the user's own, in a domain of theirs or Kubernetes' recommended app.kubernetes.io, are.
func TestSystemKey(t *testing.T) {
	for key, system := range map[string]bool{
		"kubectl.kubernetes.io/last-applied-configuration": true,
		"kueue.x-k8s.io/queue-name":                        true,
		"training.kubeflow.org/job-name":                   true,
		"kubernetes.io/metadata.name":                      true,
		"team":                                             false,
		"example.com/owner":                                false,
		"app.kubernetes.io/name":                           false,
	} {
		if SystemKey(key) != system {
			t.Errorf("SystemKey(%q) = %v, want %v", key, !system, system)
		}
	}
}

// A job this provider did not make (kubectl's, Arena's) records no sensitive variables, and any
// of its inline values may be a credential someone wrote there: read, every variable counts as
// sensitive, so that an import never shows a value in clear. This provider's own jobs read back
// exactly what they record.
func TestAJobMadeElsewhereReadsEveryInlineVariableAsSensitive(t *testing.T) {
	for _, k := range Kinds() {
		ex := kindExamples[k]
		spec := ex.spec(false)
		obj, _, err := spec.Build()
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		own, err := ex.read(obj)
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		if got := own.Pods().SensitiveEnv; !slices.Equal(got, []string{sensitiveName}) {
			t.Errorf("kind %s: its own job's sensitive variables read back as %v, want [%s]", k.Name, got, sensitiveName)
		}
		elsewhere := obj.DeepCopy()
		labels, annotations := elsewhere.GetLabels(), elsewhere.GetAnnotations()
		delete(labels, ManagedByLabel)
		delete(annotations, SensitiveEnvAnnotation)
		elsewhere.SetLabels(labels)
		elsewhere.SetAnnotations(annotations)
		read, err := ex.read(elsewhere)
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		if got, want := read.Pods().SensitiveEnv, slices.Sorted(maps.Keys(spec.Pods().Env)); !slices.Equal(got, want) {
			t.Errorf("kind %s: a job made elsewhere reads its sensitive variables as %v, want all of %v", k.Name, got, want)
		}
	}
}
