// Command mpi-operator runs mpi-operator's MPIJob (v2beta1) controller for the local cluster (the
// release its module requires: this file is shared by both generations).
//
// It uses the operator's own controller package with this project's options: one process,
// no leader election and no listener, so nothing binds outside 127.0.0.1.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	mpijobclientset "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned"
	kubeflowscheme "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/scheme"
	// Its init registers klog's flags.
	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app/options"
	informers "github.com/kubeflow/mpi-operator/pkg/client/informers/externalversions"
	"github.com/kubeflow/mpi-operator/pkg/controller"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to the kubeconfig of the cluster to manage")
	threadiness := flag.Int("threadiness", 2, "number of MPIJobs reconciled at once")
	// Upstream's flags and defaults: every event about an MPIJob or what it owns goes through the
	// work queue's rate limiter, a token bucket shared by all MPIJobs.
	queueRateLimit := flag.Int("controller-queue-rate-limit", 10, "rate limit of the controller events queue, per second")
	queueBurst := flag.Int("controller-queue-burst", 100, "maximum burst of the controller events queue")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Fatalf("loading kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		klog.Fatalf("creating kubernetes client: %v", err)
	}
	mpiClient, err := mpijobclientset.NewForConfig(cfg)
	if err != nil {
		klog.Fatalf("creating MPIJob client: %v", err)
	}
	// The controller records events about MPIJobs, so their types must be in client-go's scheme.
	if err := kubeflowscheme.AddToScheme(clientgoscheme.Scheme); err != nil {
		klog.Fatalf("registering MPIJob types: %v", err)
	}

	kubeInformers := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	mpiInformers := informers.NewSharedInformerFactory(mpiClient, 0)
	opts := &options.ServerOption{Threadiness: *threadiness, ControllerRateLimit: *queueRateLimit, ControllerBurst: *queueBurst}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl, err := controller.NewMPIJobController(ctx, kubeClient, mpiClient, nil, nil,
		kubeInformers.Core().V1().ConfigMaps(),
		kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().Services(),
		kubeInformers.Batch().V1().Jobs(),
		kubeInformers.Core().V1().Pods(),
		kubeInformers.Scheduling().V1().PriorityClasses(),
		mpiInformers.Kubeflow().V2beta1().MPIJobs(),
		opts)
	if err != nil {
		klog.Fatalf("creating MPIJob controller: %v", err)
	}

	stop := make(chan struct{})
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-signals; close(stop) }()

	kubeInformers.Start(stop)
	mpiInformers.Start(stop)
	if err := ctrl.Run(*threadiness, stop); err != nil {
		klog.Fatalf("running MPIJob controller: %v", err)
	}
}
