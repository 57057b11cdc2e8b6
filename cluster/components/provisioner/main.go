// Command provisioner stands in, on the local cluster, for the autoscaler a cloud runs behind
// Kueue's capacity on demand (cluster-autoscaler's ProvisioningRequests, GKE's Dynamic Workload
// Scheduler): it answers every ProvisioningRequest (autoscaling.x-k8s.io/v1) that has no answer
// yet. The cluster's simulated GPU nodes are the capacity, so it provisions nothing: it marks the
// request Provisioned, or Failed where the request's parameters ask for that with
// SimulatedOutcome: "Failed" (a ProvisioningRequestConfig's parameters are copied into each
// request), so that a test sees a request the cloud cannot serve.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var provisioningRequests = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1", Resource: "provisioningrequests"}

// OutcomeParameter is the request parameter that asks for an outcome; "Failed" fails the request,
// anything else (or none) provisions it.
const OutcomeParameter = "SimulatedOutcome"

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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 10*time.Minute)
	informer := factory.ForResource(provisioningRequests).Informer()
	answer := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if err := respond(ctx, client, u); err != nil {
				log.Printf("%s/%s: %v", u.GetNamespace(), u.GetName(), err)
			}
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: answer, UpdateFunc: func(_, obj any) { answer(obj) }}); err != nil {
		log.Fatal(err)
	}
	factory.Start(ctx.Done())
	log.Print("answering ProvisioningRequests")
	<-ctx.Done()
	factory.Shutdown()
}

// respond marks a request that has no answer yet Provisioned or Failed, as its parameters ask.
func respond(ctx context.Context, client dynamic.Interface, pr *unstructured.Unstructured) error {
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
