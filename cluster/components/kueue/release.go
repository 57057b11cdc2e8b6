package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/provisioning"
	"sigs.k8s.io/kueue/pkg/controller/concurrentadmission"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/dra"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	utildra "sigs.k8s.io/kueue/pkg/util/dra"
	utilexpectations "sigs.k8s.io/kueue/pkg/util/expectations"
)

// What Kueue v0.19.2's command does otherwise than v0.17.0's
// (../../generations/previous/kueue/release.go).

// featuresOff are the Kueue features that need parts this cluster does not run: ClusterProfiles
// (a CRD it does not install), the on-demand visibility API server, the scheduling simulator. The
// features on by default that it keeps (topology-aware scheduling, MultiKueue, DRA, failure
// recovery, concurrent admission) are wired as Kueue's command wires them.
const featuresOff = "MultiKueueClusterProfile=false,VisibilityOnDemand=false," +
	"ElasticJobsViaWorkloadSlices=false,SchedulerLibraryIntegration=false"

// configure sets the feature gates, validates the configuration and adds its webhook settings.
func configure(options *ctrl.Options, cfg *configapi.Configuration, scheme *runtime.Scheme) error {
	if err := config.LoadAndValidateFeatureGates(featuresOff, cfg.FeatureGates).ToAggregate(); err != nil {
		return err
	}
	if err := config.Validate(cfg, scheme).ToAggregate(); err != nil {
		return err
	}
	return config.AddWebhookSettingsTo(options, cfg)
}

// release holds what the release's caches, controllers and scheduler share: the resource
// formatter, the preemption expectations, and DRA's resource mapping where the feature is on.
type release struct {
	formatter      *resources.ResourceFormatter
	expectations   *utilexpectations.Store
	draMapper      *dra.ResourceMapper
	draBacked      *dra.ExtendedResourceCache
	resourceSlices bool
}

func newRelease() *release {
	r := &release{formatter: resources.NewResourceFormatter(), expectations: preemptexpectations.New()}
	if features.Enabled(features.KueueDRAIntegration) {
		r.draMapper, r.draBacked = dra.NewResourceMapper(), dra.NewExtendedResourceCache()
	}
	return r
}

func (r *release) cacheOptions() []schdcache.Option {
	return []schdcache.Option{schdcache.WithResourceFormatter(r.formatter)}
}

func (r *release) queueOptions() []qcache.Option {
	options := []qcache.Option{qcache.WithPreemptionExpectations(r.expectations), qcache.WithResourceFormatter(r.formatter)}
	if r.draBacked != nil {
		options = append(options, qcache.WithDRABackedResources(r.draBacked))
	}
	return options
}

// setupIndexes indexes ResourceSlices where the cluster serves them.
func (r *release) setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	r.resourceSlices = utildra.CheckResourceSliceAPIAvailable(mgr)
	if !r.resourceSlices {
		return nil
	}
	if err := core.SetupResourceSliceIndexer(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("ResourceSlice indexes: %w", err)
	}
	return nil
}

func (r *release) setupCore(mgr ctrl.Manager, queues *qcache.Manager, cCache *schdcache.Cache, cfg *configapi.Configuration) (string, error) {
	return core.SetupControllers(mgr, queues, cCache, cfg, core.SetupControllersOpts{
		PreemptionExpectations:    r.expectations,
		DRAMapper:                 r.draMapper,
		DRABackedResources:        r.draBacked,
		ResourceFormatter:         r.formatter,
		ResourceSliceAPIAvailable: r.resourceSlices,
	})
}

// setupControllers starts the controllers v0.17.0 does not have: concurrent admission's.
func (r *release) setupControllers(mgr ctrl.Manager, queues *qcache.Manager, cfg *configapi.Configuration) error {
	if !features.Enabled(features.ConcurrentAdmission) {
		return nil
	}
	if failed, err := concurrentadmission.SetupControllers(mgr, queues, cfg, nil); err != nil {
		return fmt.Errorf("concurrent admission controller %s: %w", failed, err)
	}
	return nil
}

func (r *release) newScheduler(mgr ctrl.Manager, queues *qcache.Manager, cCache *schdcache.Cache, cfg *configapi.Configuration) *scheduler.Scheduler {
	return scheduler.New(queues, cCache, mgr.GetClient(), mgr.GetEventRecorder(constants.AdmissionName),
		scheduler.WithFairSharing(cfg.FairSharing),
		scheduler.WithAdmissionFairSharing(cfg.AdmissionFairSharing),
		scheduler.WithPreemptionExpectations(r.expectations),
		scheduler.WithResourceFormatter(r.formatter))
}

// newProvisioning is Kueue's admission check controller of ProvisioningRequests, as the release's
// command makes it.
func (r *release) newProvisioning(mgr ctrl.Manager) (*provisioning.Controller, error) {
	return provisioning.NewController(mgr.GetClient(), mgr.GetEventRecorder("kueue-provisioning-request-controller"), nil)
}
