package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
)

// KueueNamespace is the namespace Kueue's configuration names as its own (events, and the
// namespace its managedJobsNamespaceSelector leaves alone).
const KueueNamespace = "kueue-system"

// kueueModule is the module whose files (CRDs, webhook manifests) the kueue component pins.
const kueueModule = "sigs.k8s.io/kueue"

// KueueIntegrations are the job integrations the local Kueue runs, with the resource each one
// watches: every Kubeflow kind the provider ships. (A Framework has no Kueue integration.)
var KueueIntegrations = map[string]string{
	"kubeflow.org/mpijob":     "mpijobs",
	"kubeflow.org/pytorchjob": "pytorchjobs",
	"kubeflow.org/tfjob":      "tfjobs",
}

// writeKueueConfig writes Kueue's Configuration: webhooks on 127.0.0.1 with the cluster's
// certificate, no leader election, the integrations above.
func (s *starter) writeKueueConfig() (string, error) {
	dir := filepath.Join(s.c.RunDir, "kueue")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var frameworks []string
	for name := range KueueIntegrations {
		frameworks = append(frameworks, strconv.Quote(name))
	}
	sort.Strings(frameworks)
	cfg := fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %q
clientConnection:
  qps: 50
  burst: 100
integrations:
  frameworks: [%s]
`, KueueNamespace, s.c.Ports["kueue-webhook"], s.pki.webhookCertDir(), strings.Join(frameworks, ", "))
	path := filepath.Join(dir, "config.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

// kueueCRDs installs every CRD of the pinned Kueue release and its namespace.
func (s *starter) kueueCRDs(ctx context.Context, c *clients) ([]string, error) {
	dir, err := moduleDir(ctx, s.opts.SourceDir, "kueue", kueueModule)
	if err != nil {
		return nil, err
	}
	bases := filepath.Join(dir, "config", "components", "crd", "bases")
	files, err := filepath.Glob(filepath.Join(bases, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Kueue CRDs in %s: %v", bases, err)
	}
	var names []string
	for _, f := range files {
		installed, err := applyManifests(ctx, c, f)
		if err != nil {
			return nil, err
		}
		names = append(names, installed...)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	return names, nil
}

// registerKueueWebhooks registers Kueue's webhooks from the release's own manifests, by URL on
// loopback instead of through a Service: those on Kueue's own kinds and on the resources of the
// integrations it runs. Each path is first checked to be served, so a manifest that names a
// handler this build lacks fails start-up instead of every later request.
func (s *starter) registerKueueWebhooks(ctx context.Context, c *clients) error {
	ca, err := os.ReadFile(s.pki.caCert())
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://127.0.0.1:" + strconv.Itoa(s.c.Ports["kueue-webhook"])
	if err := s.waitServing(ctx, "Kueue's webhook server", client, base, 90*time.Second); err != nil {
		return err
	}

	dir, err := moduleDir(ctx, s.opts.SourceDir, "kueue", kueueModule)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "config", "components", "webhook", "manifests.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	wanted := func(rules []admissionregistrationv1.RuleWithOperations) bool {
		for _, r := range rules {
			for _, res := range r.Resources {
				if !kueueOwn(r.APIGroups) && !integrationResource(res) {
					return false
				}
			}
		}
		return len(rules) > 0
	}
	served := func(p *string) (string, error) {
		if p == nil {
			return "", errors.New("a Kueue webhook without a path")
		}
		resp, err := client.Post(base+*p, "application/json", strings.NewReader("{}"))
		if err != nil {
			return "", err
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return "", fmt.Errorf("kueue does not serve %s", *p)
		}
		return base + *p, nil
	}

	// Every webhook of the manifests that is kept, pointed at its URL.
	keep := func(rules []admissionregistrationv1.RuleWithOperations, cc *admissionregistrationv1.WebhookClientConfig) (bool, error) {
		if !wanted(rules) {
			return false, nil
		}
		if cc.Service == nil {
			return false, errors.New("a Kueue webhook without a service path")
		}
		url, err := served(cc.Service.Path)
		if err != nil {
			return false, err
		}
		*cc = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: ca}
		return true, nil
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		var meta metav1.TypeMeta
		if err := utilyaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			var in admissionregistrationv1.MutatingWebhookConfiguration
			if err := utilyaml.Unmarshal(doc, &in); err != nil {
				return err
			}
			out := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kueue-mutating-webhook-configuration"}}
			for _, w := range in.Webhooks {
				if ok, err := keep(w.Rules, &w.ClientConfig); err != nil {
					return err
				} else if ok {
					out.Webhooks = append(out.Webhooks, w)
				}
			}
			if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, out, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("registering Kueue's mutating webhooks: %w", err)
			}
		case "ValidatingWebhookConfiguration":
			var in admissionregistrationv1.ValidatingWebhookConfiguration
			if err := utilyaml.Unmarshal(doc, &in); err != nil {
				return err
			}
			out := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kueue-validating-webhook-configuration"}}
			for _, w := range in.Webhooks {
				if ok, err := keep(w.Rules, &w.ClientConfig); err != nil {
					return err
				} else if ok {
					out.Webhooks = append(out.Webhooks, w)
				}
			}
			if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, out, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("registering Kueue's validating webhooks: %w", err)
			}
		}
	}
}

func kueueOwn(groups []string) bool {
	return len(groups) == 1 && groups[0] == "kueue.x-k8s.io"
}

func integrationResource(resource string) bool {
	resource, _, _ = strings.Cut(resource, "/")
	for _, r := range KueueIntegrations {
		if r == resource {
			return true
		}
	}
	return false
}
