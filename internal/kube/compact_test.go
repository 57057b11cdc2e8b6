package kube

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A job in an informer is held as its JSON, and read back as the job without its managedFields
// and pod templates, a copy of the reader's own; the metadata its informer's handlers read is
// there without decoding it.
func TestAJobHeldByAnInformerReadsAsTheJobWithoutWhatNoWaitReads(t *testing.T) {
	job := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": jobs.MPI.GVR.GroupVersion().String(), "kind": jobs.MPI.Object,
		"metadata": map[string]any{
			"name": "resnet", "namespace": "default", "uid": "u1", "resourceVersion": "7", "generation": int64(2),
			"labels":        map[string]any{"team": "vision"},
			"managedFields": []any{map[string]any{"manager": "terraform-provider-training", "operation": "Apply"}},
		},
		"spec": map[string]any{"mpiReplicaSpecs": map[string]any{"Worker": map[string]any{
			"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "worker", "image": "horovod"}}}},
		}}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Running", "status": "True"}}},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{jobs.MPI.GVR: jobs.MPI.Object + "List"}, job.DeepCopy())
	c := &Client{dyn: dyn}
	c.once.Do(func() {})
	s, release, err := c.acquire(informerKey{gvr: jobs.MPI.GVR, namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	defer s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := synced(ctx, s); err != nil {
		t.Fatal(err)
	}

	item, exists, err := s.GetStore().GetByKey("default/resnet")
	if err != nil || !exists {
		t.Fatalf("the informer does not hold the job: %v", err)
	}
	a, err := meta.Accessor(item)
	if err != nil || a.GetName() != "resnet" || a.GetUID() != "u1" || a.GetLabels()["team"] != "vision" || a.GetResourceVersion() != "7" {
		t.Fatalf("the held job's metadata: %v, %v", a, err)
	}

	got, err := objectIn(s, "default", "resnet")
	if err != nil {
		t.Fatal(err)
	}
	want := job.DeepCopy()
	want.SetManagedFields(nil)
	jobs.MPI.DropPodTemplates(want)
	if !equality.Semantic.DeepEqual(got.Object, want.Object) {
		t.Fatalf("the job read from the informer:\n%v\nwant\n%v", got.Object, want.Object)
	}
	if _, found, _ := unstructured.NestedInt64(got.Object, "spec", "mpiReplicaSpecs", "Worker", "replicas"); !found {
		t.Fatal("the worker count is not read back")
	}
	got.SetLabels(map[string]string{"changed": "yes"})
	if again, _ := objectIn(s, "default", "resnet"); again.GetLabels()["changed"] != "" {
		t.Fatal("a read's job is shared with the informer")
	}
}
