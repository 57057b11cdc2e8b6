// Command provisioner stands in, on the local cluster, for the autoscaler a cloud runs behind
// Kueue's capacity on demand (cluster-autoscaler's ProvisioningRequests, GKE's Dynamic Workload
// Scheduler): it answers every ProvisioningRequest (autoscaling.x-k8s.io/v1) that has no answer
// yet. It marks the request Failed where the request's parameters ask for that with
// SimulatedOutcome: "Failed" (a ProvisioningRequestConfig's parameters are copied into each
// request), so that a test sees a request the cloud cannot serve. Otherwise it adds the nodes the
// request asks for, then marks it Provisioned: for each pod set, count KWOK nodes that each hold
// one of its pods (the pod template's requests as capacity, its node selector as labels), labelled
// NodeGroupLabel with the request's node group and tainted ProvisionedTaint, as a cloud taints
// the nodes of queued provisioning (GKE's cloud.google.com/gke-queued), so that only pods that
// tolerate it run there. The request's class detail NodeGroupDetail names the group, for a
// ProvisioningRequestConfig's podSetUpdates to send the job's pods there. The nodes are deleted
// with the request.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var provisioningRequests = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1", Resource: "provisioningrequests"}

// OutcomeParameter is the request parameter that asks for an outcome; "Failed" fails the request,
// anything else (or none) provisions it.
const OutcomeParameter = "SimulatedOutcome"

// The provisioned nodes' marks: NodeGroupLabel, the request's class detail that holds its value,
// the taint, and the annotation that names the request. (The provider's provisioning test names
// the label and the taint too.)
const (
	NodeGroupLabel    = "provisioner.kubetrain.io/node-group"
	NodeGroupDetail   = "NodeGroup"
	ProvisionedTaint  = "provisioner.kubetrain.io/provisioned"
	requestAnnotation = "provisioner.kubetrain.io/request"
	// kwokNodeAnnotation makes KWOK run the node (the cluster starts it with that selector).
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 10*time.Minute)
	informer := factory.ForResource(provisioningRequests).Informer()
	answer := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if err := respond(ctx, client, core, u); err != nil {
				log.Printf("%s/%s: %v", u.GetNamespace(), u.GetName(), err)
			}
		}
	}
	gone := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if err := removeNodes(ctx, core, u); err != nil {
				log.Printf("%s/%s: %v", u.GetNamespace(), u.GetName(), err)
			}
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: answer, UpdateFunc: func(_, obj any) { answer(obj) },
		DeleteFunc: gone}); err != nil {
		log.Fatal(err)
	}
	factory.Start(ctx.Done())
	log.Print("answering ProvisioningRequests")
	<-ctx.Done()
	factory.Shutdown()
}

// respond answers a request that has no answer yet: Failed, where its parameters ask, or
// Provisioned once its nodes are there.
func respond(ctx context.Context, client dynamic.Interface, core kubernetes.Interface, pr *unstructured.Unstructured) error {
	conditions, _, _ := unstructured.NestedSlice(pr.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && (m["type"] == "Provisioned" || m["type"] == "Failed") && m["status"] == "True" {
			return nil
		}
	}
	outcome, _, _ := unstructured.NestedString(pr.Object, "spec", "parameters", OutcomeParameter)
	kind, reason, message := "Provisioned", "Provisioned", "the local cluster's nodes are the capacity"
	if outcome == "Failed" {
		kind, reason, message = "Failed", "SimulatedFailure", "the request asked to fail ("+OutcomeParameter+")"
	}
	out := pr.DeepCopy()
	if kind == "Provisioned" {
		if err := addNodes(ctx, core, pr); err != nil {
			return err
		}
		if err := unstructured.SetNestedStringMap(out.Object, map[string]string{NodeGroupDetail: nodeGroup(pr)}, "status", "provisioningClassDetails"); err != nil {
			return err
		}
	}
	conditions = append(conditions, map[string]any{"type": kind, "status": "True", "reason": reason, "message": message,
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339), "observedGeneration": pr.GetGeneration()})
	if err := unstructured.SetNestedSlice(out.Object, conditions, "status", "conditions"); err != nil {
		return err
	}
	if _, err := client.Resource(provisioningRequests).Namespace(pr.GetNamespace()).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("marking it %s: %w", kind, err)
	}
	log.Printf("%s/%s: %s", pr.GetNamespace(), pr.GetName(), kind)
	return nil
}

// nodeGroup is the request's node group: a name short enough for a label value.
func nodeGroup(pr *unstructured.Unstructured) string {
	sum := sha256.Sum256([]byte(pr.GetNamespace() + "/" + pr.GetName()))
	return "pr-" + hex.EncodeToString(sum[:6])
}

// addNodes makes the request's nodes: count for each pod set, each holding one of its pods.
func addNodes(ctx context.Context, core kubernetes.Interface, pr *unstructured.Unstructured) error {
	podSets, _, _ := unstructured.NestedSlice(pr.Object, "spec", "podSets")
	group := nodeGroup(pr)
	for i, ps := range podSets {
		m, _ := ps.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "podTemplateRef", "name")
		count, _, _ := unstructured.NestedInt64(m, "count")
		pt, err := core.CoreV1().PodTemplates(pr.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading the pod template of pod set %d: %w", i, err)
		}
		capacity := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}
		for _, c := range pt.Template.Spec.Containers {
			for r, q := range c.Resources.Requests {
				sum := capacity[r]
				sum.Add(q)
				capacity[r] = sum
			}
		}
		for j := range count {
			labels := map[string]string{NodeGroupLabel: group}
			for k, v := range pt.Template.Spec.NodeSelector {
				labels[k] = v
			}
			node := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-%d", group, i, j), Labels: labels,
					Annotations: map[string]string{kwokNodeAnnotation: "fake", requestAnnotation: pr.GetNamespace() + "/" + pr.GetName()}},
				Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: ProvisionedTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
				// A node's status is kept on create, as a kubelet registers it.
				Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
			}
			_, err := core.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("adding node %s: %w", node.Name, err)
			}
			log.Printf("%s/%s: added node %s", pr.GetNamespace(), pr.GetName(), node.Name)
		}
	}
	return nil
}

// removeNodes deletes the nodes made for a request that is gone.
func removeNodes(ctx context.Context, core kubernetes.Interface, pr *unstructured.Unstructured) error {
	nodes, err := core.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeGroupLabel + "=" + nodeGroup(pr)})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		if err := core.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting node %s: %w", n.Name, err)
		}
		log.Printf("%s/%s: deleted node %s", pr.GetNamespace(), pr.GetName(), n.Name)
	}
	return nil
}
