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
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// A webhookManifest is a release's own webhook manifest (kubebuilder's webhook/manifests.yaml),
// registered by URL on loopback instead of through a Service.
type webhookManifest struct {
	what              string // for messages: "Kueue"
	component, module string // the component pinning the module that ships the manifest
	path              string // the manifest, in that module
	port              string // the component's webhook port, by its name in Cluster.Ports
	// configName names the registered configuration: "mutating" or "validating".
	configName func(kind string) string
	// keep says which webhooks, by their rules, this cluster registers.
	keep func(rules []admissionregistrationv1.RuleWithOperations) bool
	// objectSelectors are the selectors the release's deployment patches add, by webhook name.
	objectSelectors map[string]*metav1.LabelSelector
}

// registerManifestWebhooks registers the webhooks of a release's manifest that m keeps, pointed
// at the component's webhook server on 127.0.0.1. Each path is first checked to be served, so a
// manifest that names a handler this build lacks fails start-up instead of every later request.
func (s *starter) registerManifestWebhooks(ctx context.Context, c *clients, m webhookManifest) error {
	ca, err := os.ReadFile(s.pki.caCert())
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://127.0.0.1:" + strconv.Itoa(s.c.Ports[m.port])
	if err := s.waitServing(ctx, m.what+"'s webhook server", client, base, 90*time.Second); err != nil {
		return err
	}
	dir, err := host.ModuleDir(ctx, s.componentDir(m.component), m.module)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, m.path)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	served := func(p *string) (string, error) {
		if p == nil {
			return "", fmt.Errorf("a %s webhook without a path", m.what)
		}
		resp, err := client.Post(base+*p, "application/json", strings.NewReader("{}"))
		if err != nil {
			return "", err
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return "", fmt.Errorf("%s does not serve %s", m.what, *p)
		}
		return base + *p, nil
	}
	// keep points a kept webhook at its URL, with the selector its release's deployment adds.
	keep := func(name string, rules []admissionregistrationv1.RuleWithOperations, cc *admissionregistrationv1.WebhookClientConfig, sel **metav1.LabelSelector) (bool, error) {
		if len(rules) == 0 || !m.keep(rules) {
			return false, nil
		}
		if cc.Service == nil {
			return false, fmt.Errorf("a %s webhook without a service path", m.what)
		}
		url, err := served(cc.Service.Path)
		if err != nil {
			return false, err
		}
		*cc = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: ca}
		if s, ok := m.objectSelectors[name]; ok {
			*sel = s
		}
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
			out := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: m.configName("mutating")}}
			for _, w := range in.Webhooks {
				if ok, err := keep(w.Name, w.Rules, &w.ClientConfig, &w.ObjectSelector); err != nil {
					return err
				} else if ok {
					out.Webhooks = append(out.Webhooks, w)
				}
			}
			if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, out, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("registering %s's mutating webhooks: %w", m.what, err)
			}
		case "ValidatingWebhookConfiguration":
			var in admissionregistrationv1.ValidatingWebhookConfiguration
			if err := utilyaml.Unmarshal(doc, &in); err != nil {
				return err
			}
			out := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: m.configName("validating")}}
			for _, w := range in.Webhooks {
				if ok, err := keep(w.Name, w.Rules, &w.ClientConfig, &w.ObjectSelector); err != nil {
					return err
				} else if ok {
					out.Webhooks = append(out.Webhooks, w)
				}
			}
			if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, out, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("registering %s's validating webhooks: %w", m.what, err)
			}
		}
	}
}

// inGroup keeps the webhooks whose every rule is on that API group.
func inGroup(group string) func([]admissionregistrationv1.RuleWithOperations) bool {
	return func(rules []admissionregistrationv1.RuleWithOperations) bool {
		for _, r := range rules {
			if len(r.APIGroups) != 1 || r.APIGroups[0] != group {
				return false
			}
		}
		return true
	}
}
