package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// A resource's informer lists and watches it through the dynamic or the metadata client as
// client-go's dynamicinformer and metadatainformer do, without them: each returns its informer
// as an informers.GenericInformer, and that one interface links client-go's whole informers
// package into the provider (every API group's typed informers, listers, clients and apply
// configurations, some 250 packages, whose initialisation every provider process Terraform
// starts paid for).

// resourceLister is one resource in one namespace, of the dynamic or the metadata client, whose
// lists are L.
type resourceLister[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// listWatch lists and watches r, whose client is client (it says whether the client can stream
// a watch list, as client-go's informers ask).
func listWatch[L runtime.Object](r resourceLister[L], client any) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) { return r.List(ctx, opts) },
		WatchFuncWithContext: r.Watch,
	}, client)
}
