package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WorkerKubeconfigKey is the key of a MultiKueue worker's kubeconfig in its Secret (Kueue's
// MultiKueueConfigSecretKey).
const WorkerKubeconfigKey = "kubeconfig"

// InlineKubeconfig is the cluster's admin kubeconfig with its certificates and key written into
// it rather than named as files: MultiKueue refuses a worker kubeconfig that reads files.
func (c *Cluster) InlineKubeconfig() ([]byte, error) {
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return nil, fmt.Errorf("inlining the certificates of %s: %w", c.Kubeconfig, err)
	}
	return clientcmd.Write(*cfg)
}

// RegisterWorker makes worker a cluster the manager's MultiKueue can dispatch to: its
// kubeconfig, inline, in the Secret secretName of the manager's Kueue namespace (created or
// replaced). A MultiKueueCluster naming that Secret connects to the worker.
func RegisterWorker(ctx context.Context, managerKubeconfig, secretName string, worker *Cluster) error {
	data, err := worker.InlineKubeconfig()
	if err != nil {
		return err
	}
	c, err := newClients(managerKubeconfig)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: KueueNamespace},
		Data:       map[string][]byte{WorkerKubeconfigKey: data},
	}
	secrets := c.kube.CoreV1().Secrets(KueueNamespace)
	_, err = secrets.Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = secrets.Update(ctx, secret, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("storing the worker's kubeconfig in Secret %s/%s: %w", KueueNamespace, secretName, err)
	}
	return nil
}
