package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// Where an installation of Kueue (its manifests, its Helm chart) keeps its configuration.
const (
	KueueNamespace      = "kueue-system"
	KueueConfigMap      = "kueue-manager-config"
	KueueConfigMapKey   = "controller_manager_config.yaml"
	kueueConfigLocation = KueueNamespace + "/" + KueueConfigMap
)

// KueueConfig reads Kueue's configuration from the ConfigMap its installation keeps it in, once
// for the whole provider process (Client.kueueConfig). An error says why it cannot be read (not installed that way,
// or not readable with the provider's identity: the role terraform-provider-training-kueue-config
// grants it): what it decides is then not known.
func (c *Client) KueueConfig(ctx context.Context) (*kueue.Config, error) {
	return c.kueueConfig.get(ctx, struct{}{}, c.readKueueConfig)
}

func (c *Client) readKueueConfig(ctx context.Context) (*kueue.Config, error) {
	core, err := c.coreREST()
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{}
	err = retry(ctx, "GET configmap "+kueueConfigLocation, func() error {
		return core.Get().Namespace(KueueNamespace).Resource("configmaps").Name(KueueConfigMap).Do(ctx).Into(cm)
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("there is no ConfigMap %s, where Kueue's manifests and chart keep its configuration", kueueConfigLocation)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("the provider may not read ConfigMap %s (the role terraform-provider-training-kueue-config grants it)", kueueConfigLocation)
	case err != nil:
		return nil, fmt.Errorf("reading ConfigMap %s: %w", kueueConfigLocation, err)
	}
	data, ok := cm.Data[KueueConfigMapKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no key %s", kueueConfigLocation, KueueConfigMapKey)
	}
	return kueue.ParseConfig([]byte(data))
}
