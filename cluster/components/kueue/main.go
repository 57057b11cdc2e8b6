// Command kueue runs Kueue's controller manager for the local cluster: its queue and workload
// controllers, its scheduler, the job integrations its configuration enables, and its webhooks
// (the release its module requires: this file is shared by both generations, and release.go
// holds what each release's command does otherwise).
//
// Kueue's own command needs either its internal certificate management (a Secret and a
// Service's DNS name in the webhook certificate, which the API server cannot reach here) or a
// metrics certificate at a fixed path under /etc. This one wires the same library parts with
// the cluster's certificate for 127.0.0.1, and no metrics, probe or visibility server, so
// nothing binds outside 127.0.0.1. The features that need parts this cluster does not run are
// switched off rather than left half wired (featuresOff, in release.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/provisioning"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/failurerecovery"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs" // registers the job integrations
	"sigs.k8s.io/kueue/pkg/controller/tas"
	tasindexer "sigs.k8s.io/kueue/pkg/controller/tas/indexer"
	dispatcher "sigs.k8s.io/kueue/pkg/controller/workloaddispatcher"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption/fairsharing"
	"sigs.k8s.io/kueue/pkg/util/kubeversion"
	"sigs.k8s.io/kueue/pkg/webhooks"
)

func main() {
	configFile := flag.String("config", "", "Kueue Configuration file (config.kueue.x-k8s.io/v1beta2)")
	flag.Parse()
	ctrl.SetLogger(zap.New())
	if err := run(*configFile); err != nil {
		ctrl.Log.WithName("setup").Error(err, "kueue")
		os.Exit(1)
	}
}

func run(configFile string) error {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(schedulingv1.AddToScheme(scheme))
	utilruntime.Must(resourceapi.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	utilruntime.Must(kueuev1beta1.AddToScheme(scheme))
	utilruntime.Must(configapi.AddToScheme(scheme))
	utilruntime.Must(autoscaling.AddToScheme(scheme))
	utilruntime.Must(jobframework.ForEachIntegration(func(_ string, cb jobframework.IntegrationCallbacks) error {
		if cb.AddToScheme != nil {
			return cb.AddToScheme(scheme)
		}
		return nil
	}))

	options, cfg, err := config.Load(scheme, configFile)
	if err != nil {
		return fmt.Errorf("loading %s: %w", configFile, err)
	}
	if err := configure(&options, &cfg, scheme); err != nil {
		return err
	}
	options.Metrics = metricsserver.Options{BindAddress: "0"}
	options.HealthProbeBindAddress = "0"

	kubeConfig := ctrl.GetConfigOrDie()
	kubeConfig.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(*cfg.ClientConnection.QPS, int(*cfg.ClientConnection.Burst))
	ctx := ctrl.SetupSignalHandler()
	mgr, err := ctrl.NewManager(kubeConfig, options)
	if err != nil {
		return err
	}

	rel := newRelease()
	cacheOptions := rel.cacheOptions()
	if cfg.FairSharing != nil {
		cacheOptions = append(cacheOptions, schdcache.WithFairSharing(fairsharing.Enabled(cfg.FairSharing)))
	}
	cCache := schdcache.New(mgr.GetClient(), cacheOptions...)
	requeuer := qcache.NewRequeuer()
	if err := mgr.Add(requeuer); err != nil {
		return err
	}
	queues := qcache.NewManager(mgr.GetClient(), cCache, requeuer, rel.queueOptions()...)

	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		if err := tasindexer.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return fmt.Errorf("topology indexes: %w", err)
		}
	}
	if err := rel.setupIndexes(ctx, mgr); err != nil {
		return err
	}
	if err := jobframework.SetupIndexes(ctx, mgr.GetFieldIndexer(), jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks)); err != nil {
		return fmt.Errorf("job indexes: %w", err)
	}
	// Capacity on demand, where the cluster serves the ProvisioningRequest API when Kueue starts,
	// as the release's command decides it.
	provisioned := provisioning.ServerSupportsProvisioningRequest(mgr) == nil
	if provisioned {
		if err := provisioning.SetupIndexer(ctx, mgr.GetFieldIndexer()); err != nil {
			return fmt.Errorf("provisioning indexes: %w", err)
		}
	}
	if features.Enabled(features.MultiKueue) {
		if err := multikueue.SetupIndexer(ctx, mgr.GetFieldIndexer(), *cfg.Namespace); err != nil {
			return fmt.Errorf("MultiKueue indexes: %w", err)
		}
	}

	discoveryClient, err := discovery.NewDiscoveryClientForConfig(kubeConfig)
	if err != nil {
		return err
	}
	versions := kubeversion.NewServerVersionFetcher(discoveryClient)
	if err := mgr.Add(versions); err != nil {
		return err
	}
	if err := versions.FetchServerVersion(); err != nil {
		return err
	}

	if failed, err := rel.setupCore(mgr, queues, cCache, &cfg); err != nil {
		return fmt.Errorf("controller %s: %w", failed, err)
	}
	if features.Enabled(features.FailureRecoveryPolicy) {
		if failed, err := failurerecovery.SetupControllers(mgr, &cfg, nil); err != nil {
			return fmt.Errorf("failure recovery controller %s: %w", failed, err)
		}
	}
	if provisioned {
		c, err := rel.newProvisioning(mgr)
		if err != nil {
			return fmt.Errorf("provisioning controller: %w", err)
		}
		if err := c.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("provisioning controller: %w", err)
		}
	}
	if features.Enabled(features.MultiKueue) {
		if err := setupMultiKueue(mgr, &cfg); err != nil {
			return err
		}
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		if failed, err := tas.SetupControllers(mgr, queues, cCache, &cfg, nil); err != nil {
			return fmt.Errorf("topology controller %s: %w", failed, err)
		}
	}
	if err := rel.setupControllers(mgr, queues, &cfg); err != nil {
		return err
	}
	if err := setupJobs(ctx, mgr, cCache, queues, &cfg, versions); err != nil {
		return err
	}
	if failed, err := webhooks.Setup(mgr, nil); err != nil {
		return fmt.Errorf("webhook %s: %w", failed, err)
	}
	go queues.CleanUpOnContext(ctx)
	go cCache.CleanUpOnContext(ctx)

	if err := mgr.Add(rel.newScheduler(mgr, queues, cCache, &cfg)); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// setupJobs starts the controllers and webhooks of the job integrations the configuration
// enables, as the release's command does.
func setupJobs(ctx context.Context, mgr ctrl.Manager, cCache *schdcache.Cache, queues *qcache.Manager,
	cfg *configapi.Configuration, versions *kubeversion.ServerVersionFetcher) error {
	nsSelector, err := metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector)
	if err != nil {
		return fmt.Errorf("managedJobsNamespaceSelector: %w", err)
	}
	return jobframework.SetupControllers(ctx, mgr, ctrl.Log.WithName("setup"),
		jobframework.WithManageJobsWithoutQueueName(cfg.ManageJobsWithoutQueueName),
		jobframework.WithWaitForPodsReady(cfg.WaitForPodsReady),
		jobframework.WithKubeServerVersion(versions),
		jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks),
		jobframework.WithManagerName(constants.KueueName),
		jobframework.WithCache(cCache),
		jobframework.WithQueues(queues),
		jobframework.WithObjectRetentionPolicies(cfg.ObjectRetentionPolicies),
		jobframework.WithManagedJobsNamespaceSelector(nsSelector),
	)
}

// setupMultiKueue starts MultiKueue's controllers as the release's command does: the worker clusters'
// connections (their kubeconfigs in Secrets of Kueue's namespace), the admission checks, the
// dispatch of workloads with the adapters of the integrations the configuration enables.
func setupMultiKueue(mgr ctrl.Manager, cfg *configapi.Configuration) error {
	adapters, err := jobframework.GetMultiKueueAdapters(sets.New(cfg.Integrations.Frameworks...))
	if err != nil {
		return fmt.Errorf("MultiKueue adapters: %w", err)
	}
	if err := multikueue.SetupControllers(mgr, *cfg.Namespace,
		multikueue.WithGCInterval(cfg.MultiKueue.GCInterval.Duration),
		multikueue.WithOrigin(ptr.Deref(cfg.MultiKueue.Origin, configapi.DefaultMultiKueueOrigin)),
		multikueue.WithWorkerLostTimeout(cfg.MultiKueue.WorkerLostTimeout.Duration),
		multikueue.WithAdapters(adapters),
		multikueue.WithDispatcherName(ptr.Deref(cfg.MultiKueue.DispatcherName, configapi.MultiKueueDispatcherModeAllAtOnce)),
	); err != nil {
		return fmt.Errorf("MultiKueue controllers: %w", err)
	}
	if failed, err := dispatcher.SetupControllers(mgr, cfg, nil); err != nil {
		return fmt.Errorf("MultiKueue dispatcher %s: %w", failed, err)
	}
	return nil
}
