package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
		dir, err := moduleDir(ctx, s.opts.SourceDir, m.component, m.module)
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

// waitEstablished waits until the named CRDs are established, so that controllers started after
// it find their kinds at once instead of retrying.
func (s *starter) waitEstablished(ctx context.Context, c *clients, names ...string) error {
	return s.waitFor(ctx, "CRDs to be established", 60*time.Second, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd, err := c.dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			established := false
			for _, cond := range conditions {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					established = true
				}
			}
			if !established {
				return false, fmt.Errorf("%s not established", name)
			}
		}
		return true, nil
	})
}

// waitNodesHealthy waits until every node of the layout is Ready and carries none of the taints
// the node lifecycle controller puts on nodes that are not (node.kubernetes.io/not-ready is on a
// new node until the controller has seen it Ready): a test must never see those.
func (s *starter) waitNodesHealthy(ctx context.Context, c *clients) error {
	nodes, err := Nodes(s.nodesFile())
	if err != nil {
		return err
	}
	return s.waitFor(ctx, "nodes to be Ready and untainted by Kubernetes", 60*time.Second, func(ctx context.Context) (bool, error) {
		list, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		healthy := 0
		var problems []string
		for i := range list.Items {
			if p := NodeProblems(&list.Items[i]); len(p) > 0 {
				problems = append(problems, list.Items[i].Name+": "+strings.Join(p, ", "))
				continue
			}
			healthy++
		}
		return healthy >= len(nodes) && len(problems) == 0, fmt.Errorf("%d of %d nodes healthy; %s", healthy, len(nodes), strings.Join(problems, "; "))
	})
}

func (s *starter) waitControllers(ctx context.Context, c *clients) error {
	if err := s.waitNodesHealthy(ctx, c); err != nil {
		return err
	}
	if s.opts.SkipOperators {
		return nil
	}
	// frameworkcontroller creates its own CRD at start-up.
	if err := s.waitEstablished(ctx, c, "frameworks.frameworkcontroller.microsoft.com"); err != nil {
		return err
	}
	// The service-account controller creating "default" shows the controller-manager works.
	if err := s.waitFor(ctx, "kube-controller-manager", 60*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.kube.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		return err
	}
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a health probe on loopback
	}}
	if err := s.waitFor(ctx, "kube-scheduler", 60*time.Second, func(ctx context.Context) (bool, error) {
		return httpGetOK(ctx, insecure, "https://127.0.0.1:"+strconv.Itoa(s.c.Ports["kube-scheduler"])+"/healthz")
	}); err != nil {
		return err
	}
	webhookURL := "https://127.0.0.1:" + strconv.Itoa(s.c.Ports["training-operator-webhook"])
	if err := s.waitServing(ctx, "training-operator's webhook server", insecure, webhookURL, 60*time.Second); err != nil {
		return err
	}
	if err := s.registerWebhooks(ctx, c, webhookURL); err != nil {
		return err
	}
	if err := s.registerKueueWebhooks(ctx, c); err != nil {
		return err
	}
	if err := s.registerTrainerWebhooks(ctx, c); err != nil {
		return err
	}
	if err := s.installDefaultRuntimes(ctx, c); err != nil {
		return err
	}
	// mpi-operator and frameworkcontroller open no port: give them a moment to fail on start-up
	// (a missing CRD, a bad kubeconfig) before calling the cluster ready.
	if err := s.waitFor(ctx, "the operators to settle", 10*time.Second, func(ctx context.Context) (bool, error) {
		select {
		case <-time.After(1500 * time.Millisecond):
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}); err != nil {
		return err
	}
	// Once more, now that the controller-manager has surely seen every node.
	return s.waitNodesHealthy(ctx, c)
}

// waitServing waits until a server answers at baseURL, whatever it answers: a webhook server
// that is listening.
func (s *starter) waitServing(ctx context.Context, what string, client *http.Client, baseURL string, limit time.Duration) error {
	return s.waitFor(ctx, what, limit, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/", nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return true, nil
	})
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

func httpOK(ctx context.Context, url string) (bool, error) {
	return httpGetOK(ctx, http.DefaultClient, url)
}

func httpGetOK(ctx context.Context, client *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return true, nil
}
