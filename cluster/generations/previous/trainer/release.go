package main

import (
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/config"
)

// What Trainer v2.2.0's command does otherwise than v2.3.0's
// (../../../components/trainer/release.go).

// loadConfig is the release's defaults (controller concurrency), as its command loads them
// without a configuration file; HTTP/2 off, as its flag's default.
func loadConfig(scheme *apiruntime.Scheme) (ctrl.Options, configapi.Configuration, error) {
	return config.Load(scheme, "", false)
}

// newManager uses the rest config as is: v2.2.0 applies no client settings of its configuration.
func newManager(options ctrl.Options, _ *configapi.Configuration) (ctrl.Manager, error) {
	return ctrl.NewManager(ctrl.GetConfigOrDie(), options)
}
