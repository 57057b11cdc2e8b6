package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// BlockLabel and RackLabel are the topology labels of the default layout's GPU nodes
// (nodes.yaml), for Kueue's Topology Aware Scheduling: block b1 holds two nodes of 8 GPUs in racks
// r1 and r2, block b2 one in rack r3.
const (
	BlockLabel = "topology.kubetrain.io/block"
	RackLabel  = "topology.kubetrain.io/rack"
)

// kwokNodeAnnotation marks the nodes KWOK simulates; nodes without it are left alone.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// SimulateExitAnnotation on a Running pod makes KWOK finish it with the phase given as its value
// ("Succeeded" or "Failed"); see kwok-stages.yaml.
const SimulateExitAnnotation = "training.kubetrain.io/simulate-exit"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// The CRDs installed from the operators' modules, by a glob in each; frameworkcontroller creates
// its own. scheduler-plugins' PodGroup CRD (for Trainer's coscheduling pod-group policy) is left
// out: with it installed, training-operator v1.9.0 watches PodGroups without having their type in
// its scheme, and its TFJob and PyTorchJob controllers never start.
var crdManifests = []struct{ component, module, glob string }{
	{"mpi-operator", "github.com/kubeflow/mpi-operator", "manifests/base/kubeflow.org_mpijobs.yaml"},
	{"training-operator", "github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_pytorchjobs.yaml"},
	{"training-operator", "github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_tfjobs.yaml"},
	{"kueue", kueueModule, "config/components/crd/bases/*.yaml"},
	// The ProvisioningRequest API, at the release Kueue builds with, installed before Kueue starts
	// so that it runs its provisioning controller (which it sets up only where the API is served).
	{"kueue", provisioningModule, "config/crd/*.yaml"},
	{"trainer", trainerModule, "manifests/base/crds/trainer.kubeflow.org_*.yaml"},
	{"jobset", jobsetModule, "config/components/crd/bases/*.yaml"},
}

// CRDs lists the CustomResourceDefinitions a ready cluster has established.
var CRDs = []string{
	"mpijobs.kubeflow.org",
	"pytorchjobs.kubeflow.org",
	"tfjobs.kubeflow.org",
	"frameworks.frameworkcontroller.microsoft.com",
	"clusterqueues.kueue.x-k8s.io",
	"localqueues.kueue.x-k8s.io",
	"resourceflavors.kueue.x-k8s.io",
	"workloads.kueue.x-k8s.io",
	"workloadpriorityclasses.kueue.x-k8s.io",
	"topologies.kueue.x-k8s.io",
	"provisioningrequestconfigs.kueue.x-k8s.io",
	"provisioningrequests.autoscaling.x-k8s.io",
	"trainjobs.trainer.kubeflow.org",
	"trainingruntimes.trainer.kubeflow.org",
	"clustertrainingruntimes.trainer.kubeflow.org",
	"jobsets.jobset.x-k8s.io",
}

type clients struct {
	kube    kubernetes.Interface
	dynamic dynamic.Interface
}

func newClients(kubeconfig string) (*clients, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{kube: kube, dynamic: dyn}, nil
}

func writeKubeconfig(path string, port int, p pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{
		Server:               "https://127.0.0.1:" + strconv.Itoa(port),
		CertificateAuthority: p.caCert(),
	}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: p.adminCert(), ClientKey: p.adminKey()}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin"}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

func (s *starter) installCRDs(ctx context.Context, c *clients) error {
	var names []string
	for _, m := range crdManifests {
		dir, err := host.ModuleDir(ctx, s.componentDir(m.component), m.module)
		if err != nil {
			return err
		}
		files, err := filepath.Glob(filepath.Join(dir, m.glob))
		if err != nil || len(files) == 0 {
			return fmt.Errorf("no CRDs at %s in %s: %v", m.glob, dir, err)
		}
		for _, f := range files {
			installed, err := applyManifests(ctx, c, f)
			if err != nil {
				return err
			}
			names = append(names, installed...)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return s.waitEstablished(ctx, c, names...)
}

// applyManifests applies every CRD in a YAML file and returns their names.
func applyManifests(ctx context.Context, c *clients, path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return names, nil
			}
			return nil, fmt.Errorf("decoding %s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		_, err := c.dynamic.Resource(crdGVR).Apply(ctx, obj.GetName(), &obj, metav1.ApplyOptions{FieldManager: "localcluster", Force: true})
		if err != nil {
			return nil, fmt.Errorf("installing %s from %s: %w", obj.GetName(), path, err)
		}
		names = append(names, obj.GetName())
	}
}

// Nodes reads a node layout file: YAML documents, each a Node.
func Nodes(path string) ([]corev1.Node, error) {
	return ReadObjects[corev1.Node](path)
}

// ReadObjects reads a file of YAML documents, each an object of type T; empty documents and
// objects without a name are skipped.
func ReadObjects[T any, PT interface {
	*T
	GetName() string
}](path string) ([]T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []T
	for {
		var obj T
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return objects, nil
			}
			return nil, fmt.Errorf("decoding %s: %w", path, err)
		}
		if PT(&obj).GetName() == "" {
			continue
		}
		objects = append(objects, obj)
	}
}

func (s *starter) nodesFile() string {
	if s.opts.NodesFile != "" {
		return s.opts.NodesFile
	}
	return filepath.Join(s.opts.SourceDir, "nodes.yaml")
}

func (s *starter) createNodes(ctx context.Context, c *clients) error {
	nodes, err := Nodes(s.nodesFile())
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return fmt.Errorf("%s holds no node", s.nodesFile())
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[kwokNodeAnnotation] = "fake"
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[corev1.LabelHostname] = n.Name
		n.Labels[corev1.LabelOSStable] = "linux"
		n.Labels[corev1.LabelArchStable] = "amd64"
		n.Labels["type"] = "kwok"
		// A node's status is kept on create, so capacity and allocatable come from the file.
		if _, err := c.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	return nil
}

// registerWebhooks points the API server at training-operator's validating webhooks, as its own
// manifests do for an in-cluster deployment, but by URL on loopback.
func (s *starter) registerWebhooks(ctx context.Context, c *clients, baseURL string) error {
	ca, err := os.ReadFile(s.pki.caCert())
	if err != nil {
		return err
	}
	var hooks []admissionregistrationv1.ValidatingWebhook
	for _, kind := range []string{"pytorchjob", "tfjob"} {
		hooks = append(hooks, admissionregistrationv1.ValidatingWebhook{
			Name: "validator." + kind + ".training-operator.kubeflow.org",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      ptr.To(baseURL + "/validate-kubeflow-org-v1-" + kind),
				CABundle: ca,
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{"kubeflow.org"}, APIVersions: []string{"v1"}, Resources: []string{kind + "s"},
				},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "validator.training-operator.kubeflow.org"},
		Webhooks:   hooks,
	}
	_, err = c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registering training-operator's webhooks: %w", err)
	}
	return nil
}
