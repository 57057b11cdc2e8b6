package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// The core group's pods, nodes, namespaces and events are read as typed objects over protobuf:
// decoding a pod list straight into structs costs a fraction of decoding JSON maps and
// converting them by reflection. They are read through a REST client whose scheme holds the
// core group's types alone, not through client-go's typed core client: that one decodes with
// client-go's scheme, which registers every API group's types, and linking them (some 6 MB of
// code the process maps and initialises, for resources it never reads) cost every provider
// process Terraform starts memory it never used.

// coreScheme holds the core group's types (and meta/v1's options, as its parameters).
var coreScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

var coreParameters = runtime.NewParameterCodec(coreScheme)

// coreClient is a REST client of the core group's v1, over protobuf.
func coreClient(cfg *rest.Config) (rest.Interface, error) {
	core := rest.CopyConfig(cfg)
	core.APIPath = "/api"
	core.GroupVersion = &corev1.SchemeGroupVersion
	core.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	core.ContentType = "application/vnd.kubernetes.protobuf"
	core.NegotiatedSerializer = serializer.NewCodecFactory(coreScheme).WithoutConversion()
	return rest.RESTClientFor(core)
}

func listCorePods(ctx context.Context, core rest.Interface, namespace string, opts metav1.ListOptions) (*corev1.PodList, error) {
	list := &corev1.PodList{}
	err := core.Get().Namespace(namespace).Resource("pods").VersionedParams(&opts, coreParameters).Do(ctx).Into(list)
	return list, err
}

func getCoreNode(ctx context.Context, core rest.Interface, name string) (*corev1.Node, error) {
	node := &corev1.Node{}
	err := core.Get().Resource("nodes").Name(name).Do(ctx).Into(node)
	return node, err
}

func listCoreNodes(ctx context.Context, core rest.Interface, opts metav1.ListOptions) (*corev1.NodeList, error) {
	list := &corev1.NodeList{}
	err := core.Get().Resource("nodes").VersionedParams(&opts, coreParameters).Do(ctx).Into(list)
	return list, err
}

func getCoreNamespace(ctx context.Context, core rest.Interface, name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{}
	err := core.Get().Resource("namespaces").Name(name).Do(ctx).Into(ns)
	return ns, err
}
