package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// trainerModule and jobsetModule are the modules whose files (CRDs, webhook manifests, default
// runtimes) the trainer and jobset components pin; jobset is at the release Trainer requires.
const (
	trainerModule = "github.com/kubeflow/trainer/v2"
	jobsetModule  = "sigs.k8s.io/jobset"
)

// JobSetNameLabel is the label JobSet puts on every pod of a JobSet (and Trainer names a
// TrainJob's JobSet after it); the pod webhooks of JobSet's release are limited to such pods.
const JobSetNameLabel = "jobset.sigs.k8s.io/jobset-name"

var clusterTrainingRuntimeGVR = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "clustertrainingruntimes"}

// DefaultRuntimes are the ClusterTrainingRuntimes of the release's own manifests
// (manifests/base/runtimes), installed by name: their images are never pulled on this cluster,
// whose pods KWOK runs.
var DefaultRuntimes = []string{"deepspeed-distributed", "jax-distributed", "mlx-distributed", "torch-distributed", "xgboost-distributed"}

// writeJobSetConfig writes JobSet's Configuration: the shared controller settings alone.
func (s *starter) writeJobSetConfig() (string, error) {
	return s.writeControllerConfig("jobset", "config.jobset.x-k8s.io/v1alpha1", "")
}

// writeControllerConfig writes the Configuration file of a kubebuilder controller (Kueue's,
// JobSet's): its webhooks on 127.0.0.1 with the cluster's certificate, no certificate
// management, no leader election, the client's rate limits, and the component's own settings
// (YAML) after them.
func (s *starter) writeControllerConfig(component, apiVersion, own string) (string, error) {
	dir := filepath.Join(s.c.RunDir, component)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cfg := fmt.Sprintf(`apiVersion: %s
kind: Configuration
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
%s`, apiVersion, s.c.Ports[component+"-webhook"], s.pki.webhookCertDir(), own)
	path := filepath.Join(dir, "config.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

// registerTrainerWebhooks registers the webhooks of Trainer's and JobSet's releases. JobSet's pod
// webhooks get the selector its deployment patches add, so that they see only JobSet's pods.
func (s *starter) registerTrainerWebhooks(ctx context.Context, c *clients) error {
	jobsetPods := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: JobSetNameLabel, Operator: metav1.LabelSelectorOpExists}}}
	if err := s.registerManifestWebhooks(ctx, c, webhookManifest{
		what: "JobSet", component: "jobset", module: jobsetModule, path: "config/components/webhook/manifests.yaml",
		port:            "jobset-webhook",
		configName:      func(kind string) string { return "jobset-" + kind + "-webhook-configuration" },
		keep:            func([]admissionregistrationv1.RuleWithOperations) bool { return true },
		objectSelectors: map[string]*metav1.LabelSelector{"mpod.kb.io": jobsetPods, "vpod.kb.io": jobsetPods},
	}); err != nil {
		return err
	}
	return s.registerManifestWebhooks(ctx, c, webhookManifest{
		what: "Trainer", component: "trainer", module: trainerModule, path: "manifests/base/webhook/manifests.yaml",
		port:       "trainer-webhook",
		configName: func(kind string) string { return "trainer-" + kind + "-webhook-configuration" },
		keep:       inGroup("trainer.kubeflow.org"),
	})
}

// installDefaultRuntimes installs the release's default ClusterTrainingRuntimes, through
// Trainer's webhook as any runtime is.
func (s *starter) installDefaultRuntimes(ctx context.Context, c *clients) error {
	dir, err := host.ModuleDir(ctx, s.componentDir("trainer"), trainerModule)
	if err != nil {
		return err
	}
	for _, name := range DefaultRuntimes {
		objs, err := ReadObjects[unstructured.Unstructured](filepath.Join(dir, "manifests", "base", "runtimes", runtimeFile(name)))
		if err != nil {
			return err
		}
		for i := range objs {
			obj := &objs[i]
			if obj.GetKind() != "ClusterTrainingRuntime" || obj.GetName() != name {
				return fmt.Errorf("the runtime file of Trainer for %s holds %s %s", name, obj.GetKind(), obj.GetName())
			}
			if _, err := c.dynamic.Resource(clusterTrainingRuntimeGVR).Apply(ctx, name, obj, metav1.ApplyOptions{FieldManager: "localcluster", Force: true}); err != nil {
				return fmt.Errorf("installing the runtime %s: %w", name, err)
			}
		}
	}
	return nil
}

// runtimeFile is the file of Trainer's manifests holding the default runtime of that name.
func runtimeFile(name string) string {
	base := name[:len(name)-len("-distributed")]
	return base + "_distributed.yaml"
}
