package main

import (
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/config"
)

// What Trainer v2.3.0's command does otherwise than v2.2.0's
// (../../generations/previous/trainer/release.go).

// loadConfig is the release's defaults (controller concurrency, client QPS), as its command
// loads them without a configuration file.
func loadConfig(scheme *apiruntime.Scheme) (ctrl.Options, configapi.Configuration, error) {
	return config.Load(scheme, "")
}

// newManager applies the configuration's client settings to the rest config, as the release's
// command does.
func newManager(options ctrl.Options, cfg *configapi.Configuration) (ctrl.Manager, error) {
	restCfg := ctrl.GetConfigOrDie()
	config.ApplyClientConnection(restCfg, cfg)
	return ctrl.NewManager(restCfg, options)
}
