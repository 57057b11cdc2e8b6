package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// NotServedError says that the cluster serves no resource gvr: its CRD is not installed, or is
// served at other versions only (Served, the versions it serves the group at).
type NotServedError struct {
	GVR    schema.GroupVersionResource
	Served []string
}

func (e *NotServedError) Error() string { return jobs.NotServedMessage(e.GVR, e.Served) }

// served is what discovery said of one group version.
type served struct {
	resources map[string]bool
	versions  []string // when the group version is not served: the group's versions
}

// Serves says whether the cluster serves gvr: nil if it does, a *NotServedError if it does not,
// another error if discovery could not tell. Each group version is read once per process
// (Client.discoveries).
func (c *Client) Serves(ctx context.Context, gvr schema.GroupVersionResource) error {
	if gvr.Group == "" {
		return nil // the core group: every cluster serves it
	}
	if _, err := c.dynamic(); err != nil {
		return err
	}
	gv := gvr.GroupVersion()
	s, err := c.discoveries.get(ctx, gv, func(ctx context.Context) (served, error) { return c.discover(ctx, gv) })
	switch {
	case err != nil:
		return err
	case s.resources[gvr.Resource]:
		return nil
	}
	return &NotServedError{GVR: gvr, Served: s.versions}
}

// ServesNow is Serves asked of the cluster again, not of what this process read before: for a
// wait on an operator that the same apply may be installing.
func (c *Client) ServesNow(ctx context.Context, gvr schema.GroupVersionResource) error {
	c.discoveries.forget(gvr.GroupVersion())
	return c.Serves(ctx, gvr)
}

// discover reads the resources of a group version, or, when it is not served, the versions of
// its group.
func (c *Client) discover(ctx context.Context, gv schema.GroupVersion) (served, error) {
	var list struct {
		Resources []struct {
			Name string `json:"name"`
		} `json:"resources"`
	}
	err := retry(ctx, "GET /apis/"+gv.String(), func() error {
		raw, err := c.raw.Get().AbsPath("/apis", gv.Group, gv.Version).DoRaw(ctx)
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &list)
	})
	if err == nil {
		resources := map[string]bool{}
		for _, r := range list.Resources {
			resources[r.Name] = true
		}
		return served{resources: resources}, nil
	}
	if !apierrors.IsNotFound(err) {
		return served{}, fmt.Errorf("reading what the cluster serves at %s: %w", gv, err)
	}
	var group struct {
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	}
	err = retry(ctx, "GET /apis/"+gv.Group, func() error {
		raw, err := c.raw.Get().AbsPath("/apis", gv.Group).DoRaw(ctx)
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &group)
	})
	switch {
	case apierrors.IsNotFound(err):
		return served{}, nil
	case err != nil:
		return served{}, fmt.Errorf("reading what the cluster serves of %s: %w", gv.Group, err)
	}
	var versions []string
	for _, v := range group.Versions {
		versions = append(versions, v.Version)
	}
	return served{versions: versions}, nil
}

// resourceNotFound says whether err is the API server's 404 for a resource it does not serve (as
// opposed to an object of a served resource that does not exist, whose error names it).
func resourceNotFound(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}

// explainNotFound turns the API server's 404 for a resource it does not serve into a
// *NotServedError that says what serves it; any other error is returned as it is.
func (c *Client) explainNotFound(ctx context.Context, gvr schema.GroupVersionResource, err error) error {
	if !resourceNotFound(err) {
		return err
	}
	var notServed *NotServedError
	if served := c.Serves(ctx, gvr); errors.As(served, &notServed) {
		return notServed
	}
	return err
}
