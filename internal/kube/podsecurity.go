package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"
)

// podSecurityReads are a process's reads of namespaces' labels and of the server's version, for
// the plan's Pod Security check: one request per namespace, and one for the version, however
// many jobs a plan holds.
type podSecurityReads struct {
	mu         sync.Mutex
	namespaces map[string]*namespaceRead
	version    sync.Once
	minor      string
	versionErr error
}

type namespaceRead struct {
	once   sync.Once
	labels map[string]string
	err    error
}

// PodSecurity returns the labels of a namespace (its Pod Security levels among them) and the
// server's version as Pod Security names it ("v1.34"), each read once per provider process
// within sharedNodesTimeout, as SharedNodes does. A namespace that does not exist yet has no
// labels and no error: the same apply may create it.
func (c *Client) PodSecurity(ctx context.Context, namespace string) (labels map[string]string, serverVersion string, err error) {
	core, err := c.coreREST()
	if err != nil {
		return nil, "", err
	}
	r := &c.podSecurity
	r.version.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedNodesTimeout)
		defer cancel()
		tflog.Debug(ctx, "GET /version (shared)")
		body, err := core.Get().AbsPath("/version").Do(ctx).Raw()
		var info version.Info
		if err == nil {
			err = json.Unmarshal(body, &info)
		}
		if err != nil {
			r.versionErr = fmt.Errorf("reading the server's version: %w", err)
			return
		}
		// Managed clusters write the minor as "34+".
		r.minor = fmt.Sprintf("v%s.%s", info.Major, strings.TrimRight(info.Minor, "+"))
	})
	if r.versionErr != nil {
		return nil, "", r.versionErr
	}
	labels, err = c.NamespaceLabels(ctx, namespace)
	return labels, r.minor, err
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
	r := &c.podSecurity
	r.mu.Lock()
	if r.namespaces == nil {
		r.namespaces = map[string]*namespaceRead{}
	}
	n, ok := r.namespaces[namespace]
	if !ok {
		n = &namespaceRead{}
		r.namespaces[namespace] = n
	}
	r.mu.Unlock()
	n.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedNodesTimeout)
		defer cancel()
		tflog.Debug(ctx, "GET namespace (shared)", map[string]any{"namespace": namespace})
		ns, err := getCoreNamespace(ctx, core, namespace)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			n.err = fmt.Errorf("reading namespace %s: %w", namespace, err)
		default:
			n.labels = ns.Labels
			if n.labels == nil {
				n.labels = map[string]string{}
			}
		}
	})
	return n.labels, n.err
}
