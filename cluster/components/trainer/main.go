// Command trainer runs Kubeflow Trainer's controller manager for the local cluster: the TrainJob
// controller, the training-runtime controllers and their webhooks, from the release's library
// packages (the release its module requires: this file is shared by both generations, and
// release.go holds what each release's command does otherwise).
//
// Trainer's own command either manages its webhook certificate itself (a Secret and a Service's
// DNS name, which the API server cannot reach here) or reads one from a fixed folder under /tmp
// shared by every process on the machine. This one wires the same parts (its configuration
// defaults, runtimes, controllers and webhooks) with the cluster's certificate for 127.0.0.1, and
// no metrics, probe or leader election, so nothing binds outside 127.0.0.1. The TrainJobStatus
// server (an alpha feature, off by default) is not started.
package main

import (
	"flag"
	"fmt"
	"os"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlpkg "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configapi "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/controller"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
)

func main() {
	host := flag.String("webhook-host", "127.0.0.1", "address the webhook server binds to")
	port := flag.Int("webhook-port", 9443, "port of the webhook server")
	certDir := flag.String("cert-dir", "", "folder holding the webhook server's tls.crt and tls.key")
	flag.Parse()
	ctrl.SetLogger(zap.New())
	if err := run(*host, *port, *certDir); err != nil {
		ctrl.Log.WithName("setup").Error(err, "trainer")
		os.Exit(1)
	}
}

func run(host string, port int, certDir string) error {
	scheme := apiruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(configapi.AddToScheme(scheme))
	utilruntime.Must(trainer.AddToScheme(scheme))
	utilruntime.Must(jobsetv1alpha2.AddToScheme(scheme))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(volcanov1beta1.AddToScheme(scheme))

	options, cfg, err := loadConfig(scheme)
	if err != nil {
		return fmt.Errorf("loading Trainer's default configuration: %w", err)
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(cfg.FeatureGates); err != nil {
		return err
	}
	options.Metrics = metricsserver.Options{BindAddress: "0"}
	options.HealthProbeBindAddress = "0"
	options.LeaderElection = false
	options.WebhookServer = webhook.NewServer(webhook.Options{Host: host, Port: port, CertDir: certDir})

	mgr, err := newManager(options, &cfg)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	runtimes, err := runtimecore.New(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), &cfg)
	if err != nil {
		return fmt.Errorf("initialising the runtimes: %w", err)
	}
	if name, err := controller.SetupControllers(mgr, runtimes, ctrlpkg.Options{}); err != nil {
		return fmt.Errorf("creating controller %s: %w", name, err)
	}
	if name, err := webhooks.Setup(mgr, runtimes); err != nil {
		return fmt.Errorf("creating webhook %s: %w", name, err)
	}
	return mgr.Start(ctx)
}
