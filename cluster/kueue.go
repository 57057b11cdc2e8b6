package cluster

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// KueueNamespace is the namespace Kueue's configuration names as its own (events, and the
// namespace its managedJobsNamespaceSelector leaves alone).
const KueueNamespace = "kueue-system"

// kueueModule is the module whose files (CRDs, webhook manifests) the kueue component pins.
const kueueModule = "sigs.k8s.io/kueue"

// KueueIntegrations are the job integrations the local Kueue runs, with the resource each one
// watches: every Kubeflow kind the provider ships. (A Framework has no Kueue integration.)
var KueueIntegrations = map[string]string{
	"kubeflow.org/mpijob":           "mpijobs",
	"kubeflow.org/pytorchjob":       "pytorchjobs",
	"kubeflow.org/tfjob":            "tfjobs",
	"trainer.kubeflow.org/trainjob": "trainjobs",
}

// writeKueueConfig writes Kueue's Configuration: the shared controller settings, its namespace
// and the integrations above.
func (s *starter) writeKueueConfig() (string, error) {
	var frameworks []string
	for name := range KueueIntegrations {
		frameworks = append(frameworks, strconv.Quote(name))
	}
	sort.Strings(frameworks)
	return s.writeControllerConfig("kueue", "config.kueue.x-k8s.io/v1beta2",
		fmt.Sprintf("namespace: %s\nintegrations:\n  frameworks: [%s]\n", KueueNamespace, strings.Join(frameworks, ", ")))
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
					if !kueueOwn(r.APIGroups) && !integrationResource(res) {
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

func integrationResource(resource string) bool {
	resource, _, _ = strings.Cut(resource, "/")
	for _, r := range KueueIntegrations {
		if r == resource {
			return true
		}
	}
	return false
}
