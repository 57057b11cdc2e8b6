package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KueueNamespace is the namespace Kueue's configuration names as its own (events, and the
// namespace its managedJobsNamespaceSelector leaves alone).
const KueueNamespace = "kueue-system"

// kueueModule is the module whose files (CRDs, webhook manifests) the kueue component pins.
const kueueModule = "sigs.k8s.io/kueue"

// provisioningModule is cluster-autoscaler's API module, which holds the ProvisioningRequest CRD
// Kueue's provisioning controller needs; the kueue component requires it at Kueue's release.
const provisioningModule = "k8s.io/autoscaler/cluster-autoscaler/apis"

// KueueIntegrations are the job integrations the local Kueue runs, with the resource each one
// watches: every Kubeflow kind the provider ships. (A Framework has no Kueue integration.)
var KueueIntegrations = map[string]string{
	"kubeflow.org/mpijob":           "mpijobs",
	"kubeflow.org/pytorchjob":       "pytorchjobs",
	"kubeflow.org/tfjob":            "tfjobs",
	"trainer.kubeflow.org/trainjob": "trainjobs",
}

// KueueSettings is the local Kueue's configuration where a cluster's differs from the default,
// which runs every integration of KueueIntegrations and counts every resource: a cluster whose
// Kueue is configured as another installation's may be.
type KueueSettings struct {
	// Frameworks are the integrations Kueue runs (keys of KueueIntegrations).
	Frameworks []string
	// ExcludeResourcePrefixes are Kueue's resources.excludeResourcePrefixes: resources whose names
	// start so are left out of every Workload and quota.
	ExcludeResourcePrefixes []string
	// FairSharing turns on Kueue's fair sharing (its configuration's fairSharing block, with
	// Kueue's default preemption strategies).
	FairSharing bool
}

// KueueConfigMap is the ConfigMap, in KueueNamespace, that holds Kueue's configuration under
// KueueConfigKey, as Kueue's manifests and Helm chart install it; the local cluster writes it too.
const (
	KueueConfigMap = "kueue-manager-config"
	KueueConfigKey = "controller_manager_config.yaml"
)

// kueueFrameworks are the integrations the cluster's Kueue runs.
func (s *starter) kueueFrameworks() []string {
	if k := s.opts.Kueue; k != nil {
		return k.Frameworks
	}
	var all []string
	for name := range KueueIntegrations {
		all = append(all, name)
	}
	sort.Strings(all)
	return all
}

// kueueOwn is Kueue's own part of its configuration: its namespace, its integrations, what it
// leaves out of quota and whether it shares fairly.
func (s *starter) kueueOwn() string {
	var frameworks []string
	for _, name := range s.kueueFrameworks() {
		frameworks = append(frameworks, strconv.Quote(name))
	}
	own := fmt.Sprintf("namespace: %s\nintegrations:\n  frameworks: [%s]\n", KueueNamespace, strings.Join(frameworks, ", "))
	if k := s.opts.Kueue; k != nil && len(k.ExcludeResourcePrefixes) > 0 {
		var prefixes []string
		for _, p := range k.ExcludeResourcePrefixes {
			prefixes = append(prefixes, strconv.Quote(p))
		}
		own += fmt.Sprintf("resources:\n  excludeResourcePrefixes: [%s]\n", strings.Join(prefixes, ", "))
	}
	if k := s.opts.Kueue; k != nil && k.FairSharing {
		own += "fairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n"
	}
	return own
}

// writeKueueConfig writes Kueue's Configuration: the shared controller settings and its own.
func (s *starter) writeKueueConfig() (string, error) {
	return s.writeControllerConfig("kueue", "config.kueue.x-k8s.io/v1beta2", s.kueueOwn())
}

// publishKueueConfig keeps Kueue's configuration where an installation of Kueue keeps it, the
// ConfigMap KueueConfigMap, so that what reads it there finds the one Kueue runs with.
func (s *starter) publishKueueConfig(ctx context.Context, c *clients) error {
	data, err := os.ReadFile(filepath.Join(s.c.RunDir, "kueue", "config.yaml"))
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: KueueConfigMap, Namespace: KueueNamespace},
		Data: map[string]string{KueueConfigKey: string(data)}}
	if _, err := c.kube.CoreV1().ConfigMaps(KueueNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("publishing Kueue's configuration in ConfigMap %s/%s: %w", KueueNamespace, KueueConfigMap, err)
	}
	return nil
}

// registerKueueWebhooks registers Kueue's webhooks from the release's own manifests: those on
// Kueue's own kinds and on the resources of the integrations it runs.
func (s *starter) registerKueueWebhooks(ctx context.Context, c *clients) error {
	return s.registerManifestWebhooks(ctx, c, webhookManifest{
		what: "Kueue", component: "kueue", module: kueueModule, path: "config/components/webhook/manifests.yaml",
		port:       "kueue-webhook",
		configName: func(kind string) string { return "kueue-" + kind + "-webhook-configuration" },
		keep: func(rules []admissionregistrationv1.RuleWithOperations) bool {
			for _, r := range rules {
				for _, res := range r.Resources {
					if !kueueOwn(r.APIGroups) && !s.integrationResource(res) {
						return false
					}
				}
			}
			return true
		},
	})
}

func kueueOwn(groups []string) bool {
	return len(groups) == 1 && groups[0] == "kueue.x-k8s.io"
}

// integrationResource says whether resource is one of an integration the cluster's Kueue runs.
func (s *starter) integrationResource(resource string) bool {
	resource, _, _ = strings.Cut(resource, "/")
	for _, name := range s.kueueFrameworks() {
		if KueueIntegrations[name] == resource {
			return true
		}
	}
	return false
}
