package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// The kinds this provider made in the training tool's namespace, and the file prefix of each.
var dumped = []struct {
	gvr    schema.GroupVersionResource
	prefix string // objects are named PREFIX-INDEX (elastic jobs: PREFIXINDEX)
}{
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}, "mpi-"},
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}, "tf-"},
	{schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}, "pytorch-"},
	{schema.GroupVersionResource{Group: "frameworkcontroller.microsoft.com", Version: "v1", Resource: "frameworks"}, "elastic"},
}

// The elastic jobs' own Services and NetworkPolicy (owned by their Framework; the operators'
// Services are owned by the jobs they serve and are not dumped).
var dependentGVRs = []schema.GroupVersionResource{
	{Version: "v1", Resource: "services"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
}

// dumpManifests reads back the objects this provider made in namespace and writes each, as a
// manifest a peer applies, into dir: KIND-INDEX.yaml, and elastic-dep-K.yaml for the elastic
// jobs' dependents (three per job, in job order). A manifest keeps what the provider sent:
// name, labels, annotations, spec; not the namespace (namespacePlaceholder, which the peer's
// configuration replaces with its own), status, UID, owner
// references, managed fields, or a Service's allocated cluster IPs.
func dumpManifests(ctx context.Context, kubeconfig, namespace, dir string) error {
	dyn, err := dynamicClient(kubeconfig)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range dumped {
		list, err := dyn.Resource(d.gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		kind := strings.TrimSuffix(d.prefix, "-")
		for _, item := range list.Items {
			index := strings.TrimPrefix(item.GetName(), d.prefix)
			if _, err := strconv.Atoi(index); err != nil {
				continue
			}
			if err := writeManifest(filepath.Join(dir, kind+"-"+index+".yaml"), &item); err != nil {
				return err
			}
		}
	}
	var deps []unstructured.Unstructured
	for _, gvr := range dependentGVRs {
		list, err := dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, item := range list.Items {
			for _, ref := range item.GetOwnerReferences() {
				if ref.Kind == "Framework" {
					deps = append(deps, item)
					break
				}
			}
		}
	}
	job := func(o unstructured.Unstructured) int {
		for _, ref := range o.GetOwnerReferences() {
			if ref.Kind == "Framework" {
				i, _ := strconv.Atoi(strings.TrimPrefix(ref.Name, "elastic"))
				return i
			}
		}
		return -1
	}
	sort.Slice(deps, func(i, j int) bool {
		a, b := deps[i], deps[j]
		if job(a) != job(b) {
			return job(a) < job(b)
		}
		return a.GetKind()+"/"+a.GetName() < b.GetKind()+"/"+b.GetName()
	})
	for k := range deps {
		if want := k / 3; job(deps[k]) != want {
			return fmt.Errorf("elastic job %d has not three dependents (Services and NetworkPolicy)", want)
		}
		if err := writeManifest(filepath.Join(dir, fmt.Sprintf("elastic-dep-%d.yaml", k)), &deps[k]); err != nil {
			return err
		}
	}
	return nil
}

// namespacePlaceholder stands for the peer's namespace in a manifest file.
const namespacePlaceholder = "__NAMESPACE__"

func writeManifest(path string, obj *unstructured.Unstructured) error {
	m := map[string]any{
		"apiVersion": obj.GetAPIVersion(),
		"kind":       obj.GetKind(),
	}
	meta := map[string]any{"name": obj.GetName(), "namespace": namespacePlaceholder}
	if l := obj.GetLabels(); len(l) > 0 {
		meta["labels"] = l
	}
	annotations := map[string]string{}
	for k, v := range obj.GetAnnotations() {
		if !strings.HasPrefix(k, "training.kubetrain.io/") && k != "kubectl.kubernetes.io/last-applied-configuration" {
			annotations[k] = v
		}
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	m["metadata"] = meta
	if spec, ok := obj.Object["spec"].(map[string]any); ok {
		if obj.GetKind() == "Service" && spec["clusterIP"] != "None" {
			delete(spec, "clusterIP") // allocated by the API server; a headless Service's "None" is the provider's
			delete(spec, "clusterIPs")
		}
		m["spec"] = withoutNulls(spec)
	}
	// JSON is YAML: both peers read it as such.
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// withoutNulls is v without its null values (a pod template's creationTimestamp), which a
// manifest would otherwise plan to set on every run.
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

// dynamicClient is the bench's own client of the cluster, not rate-limited in practice.
func dynamicClient(kubeconfig string) (*dynamic.DynamicClient, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	return dynamic.NewForConfig(cfg)
}
