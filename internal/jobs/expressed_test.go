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

// What a job's spec holds outside its pod templates that the resource cannot say (an MPIJob's
// gang-scheduling policy's minimum resources and launcher creation policy set with kubectl) is named by its path; what the
// rebuild sets and the live job lacks is no gap.
func TestUnexpressedNamesTheSpecFieldsOutsideThePods(t *testing.T) {
	spec := arenaSSDSpec()
	rebuilt, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	live := rebuilt.DeepCopy()
	if err := unstructured.SetNestedField(live.Object, "4", "spec", "runPolicy", "schedulingPolicy", "minResources", "cpu"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(live.Object, "WaitForWorkersReady", "spec", "launcherCreationPolicy"); err != nil {
		t.Fatal(err)
	}
	// What mpi-operator's CRD defaults, the API server writes: no gap.
	if err := unstructured.SetNestedField(live.Object, "OpenMPI", "spec", "mpiImplementation"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(live.Object, false, "spec", "runPolicy", "suspend"); err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(live.Object, "spec", "runPolicy", "backoffLimit")
	want := []string{"spec.launcherCreationPolicy", "spec.runPolicy.schedulingPolicy.minResources.cpu"}
	if got := MPI.Unexpressed(live, rebuilt); !reflect.DeepEqual(got, want) {
		t.Errorf("Unexpressed = %v, want %v", got, want)
	}
}
