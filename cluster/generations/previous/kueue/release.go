package main

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/provisioning"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	utilexpectations "sigs.k8s.io/kueue/pkg/util/expectations"
)

// What Kueue v0.17.0's command does otherwise than v0.19.2's
// (../../../components/kueue/release.go): its configuration is validated by config.Load, its
// SetupControllers take a role tracker and custom metric labels (nil here: one process, no
// custom labels), it has no resource formatter, DRA mapping or concurrent-admission controller,
// and its scheduler takes the old events API's recorder.

// featuresOff are the features on by default in v0.17.0 that need a part this cluster does not
// run: the on-demand visibility API server.
const featuresOff = "VisibilityOnDemand=false"

// configure sets the feature gates and adds the configuration's webhook settings.
func configure(options *ctrl.Options, cfg *configapi.Configuration, _ *runtime.Scheme) error {
	if err := config.ValidateFeatureGates(featuresOff, cfg.FeatureGates).ToAggregate(); err != nil {
		return err
	}
	if err := utilfeature.DefaultMutableFeatureGate.Set(featuresOff); err != nil {
		return err
	}
	config.AddWebhookSettingsTo(options, cfg)
	return nil
}

// release holds what the release's queues, controllers and scheduler share: the preemption
// expectations.
type release struct {
	expectations *utilexpectations.Store
}

func newRelease() *release { return &release{expectations: preemptexpectations.New()} }

func (r *release) cacheOptions() []schdcache.Option { return nil }

func (r *release) queueOptions() []qcache.Option {
	return []qcache.Option{qcache.WithPreemptionExpectations(r.expectations)}
}

func (r *release) setupIndexes(context.Context, ctrl.Manager) error { return nil }

func (r *release) setupCore(mgr ctrl.Manager, queues *qcache.Manager, cCache *schdcache.Cache, cfg *configapi.Configuration) (string, error) {
	return core.SetupControllers(mgr, queues, cCache, cfg, nil, r.expectations, nil)
}

func (r *release) setupControllers(ctrl.Manager, *qcache.Manager, *configapi.Configuration) error {
	return nil
}

func (r *release) newScheduler(mgr ctrl.Manager, queues *qcache.Manager, cCache *schdcache.Cache, cfg *configapi.Configuration) *scheduler.Scheduler {
	return scheduler.New(queues, cCache, mgr.GetClient(), mgr.GetEventRecorderFor(constants.AdmissionName), //nolint:staticcheck // v0.17.0's scheduler takes the old events API's recorder
		scheduler.WithFairSharing(cfg.FairSharing),
		scheduler.WithAdmissionFairSharing(cfg.AdmissionFairSharing),
		scheduler.WithPreemptionExpectations(r.expectations))
}

// newProvisioning is Kueue's admission check controller of ProvisioningRequests, as the release's
// command makes it.
func (r *release) newProvisioning(mgr ctrl.Manager) (*provisioning.Controller, error) {
	return provisioning.NewController(mgr.GetClient(), mgr.GetEventRecorderFor("kueue-provisioning-request-controller"), nil)
}
