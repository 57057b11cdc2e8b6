package kube

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// compactObject is how an informer of unstructured objects (the jobs of a kind, Kueue's
// Workloads) holds each: as its JSON, beside the metadata the informer's indexes and the waits'
// filters read. Decoded, a job is a tree of maps several times the size of its JSON, and an
// informer holds every job of its kind in the namespace while a wait reads one: 1,000 jobs held
// as maps were 12 MB of a destroy's 28 MB live heap. A wait decodes its own job when it looks at
// it (object), so what it reads is its own copy.
type compactObject struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	json []byte
}

// DeepCopyObject copies the metadata; the JSON is never written after compact.
func (o *compactObject) DeepCopyObject() runtime.Object {
	c := *o
	o.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// compact is u as an informer holds it, with what compactObject's metadata keeps: its name,
// namespace, UID, resource version, generation, labels, owners and deletion.
func compact(u *unstructured.Unstructured) (*compactObject, error) {
	json, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("holding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return &compactObject{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
			Generation: u.GetGeneration(), Labels: u.GetLabels(), OwnerReferences: u.GetOwnerReferences(),
			DeletionTimestamp: u.GetDeletionTimestamp(),
		},
		json: json,
	}, nil
}

// object decodes the object the informer holds, a copy of its own.
func (o *compactObject) object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(o.json); err != nil {
		return nil, fmt.Errorf("reading %s %s/%s as held: %w", o.Kind, o.Namespace, o.Name, err)
	}
	return u, nil
}

// heldObject is the object an informer of unstructured objects holds as item.
func heldObject(item any) (*unstructured.Unstructured, error) {
	o, ok := item.(*compactObject)
	if !ok {
		return nil, fmt.Errorf("unexpected %T in the informer's store", item)
	}
	return o.object()
}
