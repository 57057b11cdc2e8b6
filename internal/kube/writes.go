package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// Create creates obj, stamped with its request hash and a create ID of its own
// (jobs.StampRequest). If an object of that name exists, it is adopted and returned when it is
// this call's own (an attempt whose answer was lost), or when it was made by this provider from
// the same request and adoptable says it may be (an earlier, interrupted apply's); any other
// existing object fails the create with an ExistsError.
func (c *Client) Create(ctx context.Context, t Target, obj *unstructured.Unstructured, adoptable func(existing *unstructured.Unstructured) error) (*unstructured.Unstructured, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	if err := jobs.StampRequest(obj, hex.EncodeToString(id)); err != nil {
		return nil, fmt.Errorf("creating %s: %w", t, err)
	}
	tflog.Debug(ctx, "CREATE "+t.String())
	defer c.wrote(t.GVR, t.Namespace)
	var created *unstructured.Unstructured
	err = retry(ctx, "CREATE "+t.String(), func() (err error) {
		created, err = dyn.Resource(t.GVR).Namespace(t.Namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager, FieldValidation: metav1.FieldValidationStrict})
		return err
	})
	if apierrors.IsAlreadyExists(err) {
		existing, getErr := c.Get(ctx, t)
		var refused error
		if getErr == nil && existing != nil && existing.GetDeletionTimestamp() == nil {
			switch {
			case jobs.SameCreate(existing, obj):
				tflog.Info(ctx, "adopted "+t.String()+": this create's own object, whose answer was lost")
				return existing, nil
			case jobs.SameRequest(existing, obj):
				if refused = adoptable(existing); refused == nil {
					tflog.Info(ctx, "adopted "+t.String()+": an interrupted apply made it from the same configuration")
					return existing, nil
				}
			}
		}
		return nil, &ExistsError{Existing: existing, NotAdopted: refused, err: fmt.Errorf("creating %s: %w", t, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", t, explainUnknownField(t.GVR, c.explainNotFound(ctx, t.GVR, err)))
	}
	return created, nil
}

// ExistsError is Create's error when an object of the name stands in the way and is not the
// request's own: Existing is that object as Create read it, nil if it could not be read.
type ExistsError struct {
	Existing *unstructured.Unstructured
	// NotAdopted says why an object this provider made from the same request was not adopted.
	NotAdopted error
	err        error
}

func (e *ExistsError) Error() string { return e.err.Error() }

func (e *ExistsError) Unwrap() error { return e.err }

// Patch applies a patch to the target object.
func (c *Client) Patch(ctx context.Context, t Target, pt types.PatchType, patch []byte) (*unstructured.Unstructured, error) {
	dyn, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	tflog.Debug(ctx, "PATCH "+t.String(), map[string]any{"patch": string(patch)})
	defer c.wrote(t.GVR, t.Namespace)
	var obj *unstructured.Unstructured
	err = retry(ctx, "PATCH "+t.String(), func() (err error) {
		obj, err = dyn.Resource(t.GVR).Namespace(t.Namespace).Patch(ctx, t.Name, pt, patch, metav1.PatchOptions{FieldManager: FieldManager, FieldValidation: metav1.FieldValidationStrict})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("patching %s: %w", t, explainUnknownField(t.GVR, err))
	}
	return obj, nil
}

// UnknownFieldError is the API server's refusal of a field the schema it serves for gvr lacks:
// writes ask for strict field validation, so that an operator's release older than the provider
// writes for refuses the write instead of dropping the field and running the job without it.
type UnknownFieldError struct {
	GVR schema.GroupVersionResource
	err error
}

func (e *UnknownFieldError) Error() string {
	var fields []string
	for _, m := range unknownFieldName.FindAllStringSubmatch(e.err.Error(), -1) {
		fields = append(fields, m[1])
	}
	return fmt.Sprintf("%v. %s", e.err, jobs.UnknownFieldsMessage(e.GVR, fields))
}

// unknownFieldName finds the fields a strict write's refusal names.
var unknownFieldName = regexp.MustCompile(`unknown field "([^"]+)"`)

func (e *UnknownFieldError) Unwrap() error { return e.err }

// explainUnknownField turns the API server's strict-validation refusal of an unknown field into an
// UnknownFieldError; any other error is returned as it is.
func explainUnknownField(gvr schema.GroupVersionResource, err error) error {
	if err != nil && apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "unknown field") {
		return &UnknownFieldError{GVR: gvr, err: err}
	}
	return err
}

// Delete deletes the target, with foreground propagation (the object stays visible until the
// garbage collector has removed its pods and other dependants) unless t.BackgroundDeletion says
// it goes at once and the caller waits for its dependants itself. NotFound is success. With a uid,
// only that object is deleted: one of the same name made since by someone else is left alone,
// with an error that says so.
func (c *Client) Delete(ctx context.Context, t Target, uid types.UID) error {
	dyn, err := c.dynamic()
	if err != nil {
		return err
	}
	tflog.Debug(ctx, "DELETE "+t.String())
	defer c.wrote(t.GVR, t.Namespace)
	opts := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}
	if t.BackgroundDeletion {
		opts.PropagationPolicy = ptr.To(metav1.DeletePropagationBackground)
	}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err = retry(ctx, "DELETE "+t.String(), func() error {
		return dyn.Resource(t.GVR).Namespace(t.Namespace).Delete(ctx, t.Name, opts)
	})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err) && uid != "":
		return fmt.Errorf("%s was not deleted: it is no longer the object Terraform created (uid %s) but one made since outside Terraform. "+
			"Leave it with terraform state rm, or delete it yourself. (%w)", t, uid, err)
	}
	return fmt.Errorf("deleting %s: %w", t, err)
}

// DeleteIf deletes the target with foreground propagation if it exists and ours says it may:
// the check and the delete are tied by a UID precondition, so an object replaced in between is
// never deleted unchecked. It returns the object it left alone, if any.
func (c *Client) DeleteIf(ctx context.Context, t Target, ours func(*unstructured.Unstructured) bool) (left *unstructured.Unstructured, err error) {
	obj, err := c.Get(ctx, t)
	if err != nil || obj == nil {
		return nil, err
	}
	if !ours(obj) {
		return obj, nil
	}
	// A conflict: replaced in between by an object that was not checked, so it is left alone.
	if err := c.Delete(ctx, t, obj.GetUID()); err != nil {
		if apierrors.IsConflict(err) {
			return obj, nil
		}
		return nil, err
	}
	return nil, nil
}
