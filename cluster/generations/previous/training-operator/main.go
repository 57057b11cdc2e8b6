// Command training-operator runs training-operator's v1 PyTorchJob and TFJob controllers and
// their validating webhooks for the local cluster.
//
// Its own cmd listens on all interfaces and blocks its controllers until a certificate rotator
// has written a certificate under /tmp; here the webhook server listens on 127.0.0.1 with a
// certificate the cluster tool made, and metrics and probes are off. Its v1 MPIJob controller
// is not run: its CRD has the same name as mpi-operator's v2beta1 one.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	controllerv1 "github.com/kubeflow/training-operator/pkg/controller.v1"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/webhooks"
)

func main() {
	// controller-runtime registers --kubeconfig itself; ctrl.GetConfig reads it.
	webhookPort := flag.Int("webhook-port", 0, "port of the validating webhook server on 127.0.0.1")
	certDir := flag.String("cert-dir", "", "folder holding the webhook server's tls.crt and tls.key")
	// The settings its own command sets by flag: the init container that holds a PyTorchJob's
	// workers until the master's name resolves (without an image, every worker pod is refused).
	// The template file does not exist here, so the operator uses its built-in template.
	flag.StringVar(&config.Config.PyTorchInitContainerImage, "pytorch-init-container-image", config.PyTorchInitContainerImageDefault,
		"image of the init container of a PyTorchJob's workers")
	flag.StringVar(&config.Config.PyTorchInitContainerTemplateFile, "pytorch-init-container-template-file", config.PyTorchInitContainerTemplateFileDefault,
		"template of that init container")
	flag.IntVar(&config.Config.PyTorchInitContainerMaxTries, "pytorch-init-container-max-tries", config.PyTorchInitContainerMaxTriesDefault,
		"tries of that init container")
	flag.Parse()
	ctrl.SetLogger(zap.New())
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflowv1.AddToScheme(scheme))

	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "loading kubeconfig")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    "127.0.0.1",
			Port:    *webhookPort,
			CertDir: *certDir,
		}),
	})
	if err != nil {
		log.Error(err, "creating manager")
		os.Exit(1)
	}

	for _, kind := range []string{kubeflowv1.PyTorchJobKind, kubeflowv1.TFJobKind} {
		if err := controllerv1.SupportedSchemeReconciler[kind](mgr, common.GenNonGangSchedulerSetupFunc(), 1); err != nil {
			log.Error(err, "setting up controller", "kind", kind)
			os.Exit(1)
		}
		if err := webhooks.SupportedSchemeWebhook[kind](mgr); err != nil {
			log.Error(err, "setting up webhook", "kind", kind)
			os.Exit(1)
		}
	}

	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "running manager")
		os.Exit(1)
	}
}
