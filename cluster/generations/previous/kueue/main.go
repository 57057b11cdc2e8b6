// Command kueue runs Kueue v0.17.0's controller manager for the previous generation of the local
// cluster, as ../../../components/kueue runs the current release: its queue and workload
// controllers, its scheduler, the job integrations its configuration enables, and its webhooks,
// with the cluster's certificate for 127.0.0.1 and no metrics, probe or visibility server.
//
// It follows v0.17.0's own cmd/kueue: that release's SetupControllers take a role tracker and
// custom metric labels (nil here: one process, no custom labels), it has no concurrent-admission
// controller, and its configuration is validated by config.Load.
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
	utilfeature "k8s.io/apiserver/pkg/util/feature"
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
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/failurerecovery"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs" // registers the job integrations
	"sigs.k8s.io/kueue/pkg/controller/tas"
	tasindexer "sigs.k8s.io/kueue/pkg/controller/tas/indexer"
	dispatcher "sigs.k8s.io/kueue/pkg/controller/workloaddispatcher"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption/fairsharing"
	"sigs.k8s.io/kueue/pkg/util/kubeversion"
	"sigs.k8s.io/kueue/pkg/webhooks"
)

// featuresOff are the features on by default in v0.17.0 that need a part this cluster does not
// run: the on-demand visibility API server.
const featuresOff = "VisibilityOnDemand=false"

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
	if err := config.ValidateFeatureGates(featuresOff, cfg.FeatureGates).ToAggregate(); err != nil {
		return err
	}
	if err := utilfeature.DefaultMutableFeatureGate.Set(featuresOff); err != nil {
		return err
	}
	config.AddWebhookSettingsTo(&options, &cfg)
	options.Metrics = metricsserver.Options{BindAddress: "0"}
	options.HealthProbeBindAddress = "0"

	kubeConfig := ctrl.GetConfigOrDie()
	kubeConfig.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(*cfg.ClientConnection.QPS, int(*cfg.ClientConnection.Burst))
	ctx := ctrl.SetupSignalHandler()
	mgr, err := ctrl.NewManager(kubeConfig, options)
	if err != nil {
		return err
	}

	var cacheOptions []schdcache.Option
	if cfg.FairSharing != nil {
		cacheOptions = append(cacheOptions, schdcache.WithFairSharing(fairsharing.Enabled(cfg.FairSharing)))
	}
	cCache := schdcache.New(mgr.GetClient(), cacheOptions...)
	requeuer := qcache.NewRequeuer()
	if err := mgr.Add(requeuer); err != nil {
		return err
	}
	expectations := preemptexpectations.New()
	queues := qcache.NewManager(mgr.GetClient(), cCache, requeuer, qcache.WithPreemptionExpectations(expectations))

	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		if err := tasindexer.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return fmt.Errorf("topology indexes: %w", err)
		}
	}
	if features.Enabled(features.MultiKueue) {
		if err := multikueue.SetupIndexer(ctx, mgr.GetFieldIndexer(), *cfg.Namespace); err != nil {
			return fmt.Errorf("MultiKueue indexes: %w", err)
		}
	}
	if err := jobframework.SetupIndexes(ctx, mgr.GetFieldIndexer(), jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks)); err != nil {
		return fmt.Errorf("job indexes: %w", err)
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

	if failed, err := core.SetupControllers(mgr, queues, cCache, &cfg, nil, expectations, nil); err != nil {
		return fmt.Errorf("controller %s: %w", failed, err)
	}
	if features.Enabled(features.FailureRecoveryPolicy) {
		if failed, err := failurerecovery.SetupControllers(mgr, &cfg, nil); err != nil {
			return fmt.Errorf("failure recovery controller %s: %w", failed, err)
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
	if err := setupJobs(ctx, mgr, cCache, queues, &cfg, versions); err != nil {
		return err
	}
	if failed, err := webhooks.Setup(mgr, nil); err != nil {
		return fmt.Errorf("webhook %s: %w", failed, err)
	}
	go queues.CleanUpOnContext(ctx)
	go cCache.CleanUpOnContext(ctx)

	// v0.17.0's scheduler takes the old events API's recorder, as its own command gives it.
	sched := scheduler.New(queues, cCache, mgr.GetClient(), mgr.GetEventRecorderFor(constants.AdmissionName), //nolint:staticcheck // see above
		scheduler.WithFairSharing(cfg.FairSharing),
		scheduler.WithAdmissionFairSharing(cfg.AdmissionFairSharing),
		scheduler.WithPreemptionExpectations(expectations))
	if err := mgr.Add(sched); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// setupJobs starts the controllers and webhooks of the job integrations the configuration
// enables, as v0.17.0's command does.
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

// setupMultiKueue starts MultiKueue's controllers as v0.17.0's command does.
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
