package kueue

import (
	"cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LocalQueueSpec is a LocalQueue: a namespace's door to a ClusterQueue.
type LocalQueueSpec struct {
	Name, Namespace string
	ClusterQueue    string
	StopPolicy      string
}

// Build returns the LocalQueue.
func (s LocalQueueSpec) Build() (*unstructured.Unstructured, error) {
	obj := newObject("LocalQueue", s.Name, s.Namespace)
	obj.Object["spec"] = map[string]any{"clusterQueue": s.ClusterQueue, "stopPolicy": cmp.Or(s.StopPolicy, defaultStopPolicy)}
	return obj, nil
}

// ReadLocalQueue reads a LocalQueue back.
func ReadLocalQueue(obj *unstructured.Unstructured) LocalQueueSpec {
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	return LocalQueueSpec{Name: obj.GetName(), Namespace: obj.GetNamespace(), ClusterQueue: str(spec, "clusterQueue"),
		StopPolicy: cmp.Or(str(spec, "stopPolicy"), defaultStopPolicy)}
}
