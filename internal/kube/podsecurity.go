package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"
)

// PodSecurity returns the labels of a namespace (its Pod Security levels among them) and the
// server's version as Pod Security names it ("v1.34"), each read once per provider process
// (Client.namespaceLabels, Client.serverVersion) within sharedNodesTimeout, as SharedNodes does. A namespace that does not exist yet has no
// labels and no error: the same apply may create it.
func (c *Client) PodSecurity(ctx context.Context, namespace string) (labels map[string]string, serverVersion string, err error) {
	core, err := c.coreREST()
	if err != nil {
		return nil, "", err
	}
	minor, err := c.serverVersion.get(ctx, struct{}{}, func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, sharedNodesTimeout)
		defer cancel()
		tflog.Debug(ctx, "GET /version (shared)")
		body, err := core.Get().AbsPath("/version").Do(ctx).Raw()
		var info version.Info
		if err == nil {
			err = json.Unmarshal(body, &info)
		}
		if err != nil {
			return "", fmt.Errorf("reading the server's version: %w", err)
		}
		// Managed clusters write the minor as "34+".
		return fmt.Sprintf("v%s.%s", info.Major, strings.TrimRight(info.Minor, "+")), nil
	})
	if err != nil {
		return nil, "", err
	}
	labels, err = c.NamespaceLabels(ctx, namespace)
	return labels, minor, err
}

// NamespaceLabels are a namespace's labels, read once per provider process within
// sharedNodesTimeout. A namespace that does not exist yet has nil labels and no error: the same
// apply may create it, with labels not known here; one that exists has at least
// kubernetes.io/metadata.name.
func (c *Client) NamespaceLabels(ctx context.Context, namespace string) (map[string]string, error) {
	core, err := c.coreREST()
	if err != nil {
		return nil, err
	}
	return c.namespaceLabels.get(ctx, namespace, func(ctx context.Context) (map[string]string, error) {
		ctx, cancel := context.WithTimeout(ctx, sharedNodesTimeout)
		defer cancel()
		tflog.Debug(ctx, "GET namespace (shared)", map[string]any{"namespace": namespace})
		ns, err := getCoreNamespace(ctx, core, namespace)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("reading namespace %s: %w", namespace, err)
		case ns.Labels == nil:
			return map[string]string{}, nil
		}
		return ns.Labels, nil
	})
}
