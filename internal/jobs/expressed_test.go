package jobs

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A job made by another tool with what the resource cannot say (an init container, a security
// context on a container) names exactly those; the provider's own job names nothing.
func TestUnexpressed(t *testing.T) {
	spec := TFJobSpec{Name: "j", Namespace: "default", Workers: 2, Command: []string{"python", "x.py"}, Pod: PodOptions{Image: "i"}}
	rebuilt, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := TF.Unexpressed(rebuilt, rebuilt); len(got) != 0 {
		t.Errorf("the provider's own job: %v", got)
	}
	live := rebuilt.DeepCopy()
	worker, _, _ := unstructured.NestedMap(live.Object, "spec", "tfReplicaSpecs", "Worker", "template", "spec")
	worker["initContainers"] = []any{map[string]any{"name": "fetch", "image": "busybox"}}
	containers, _ := worker["containers"].([]any)
	first, ok := containers[0].(map[string]any)
	if !ok {
		t.Fatalf("containers %v", containers)
	}
	first["securityContext"] = map[string]any{"runAsUser": int64(1000)}
	if err := unstructured.SetNestedMap(live.Object, worker, "spec", "tfReplicaSpecs", "Worker", "template", "spec"); err != nil {
		t.Fatal(err)
	}
	want := []string{"worker: containers[" + corev1.Container{Name: "tensorflow"}.Name + "].securityContext", "worker: initContainers"}
	if got := TF.Unexpressed(live, rebuilt); !reflect.DeepEqual(got, want) {
		t.Errorf("Unexpressed = %v, want %v", got, want)
	}
}
