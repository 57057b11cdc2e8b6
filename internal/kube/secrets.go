package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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

// The Secret of a job's write-only variables (jobs.WriteOnlyEnv) is written and never read: the
// provider may create, patch and delete Secrets (with the role for write-only variables) but not
// get, list or watch them, and neither the values nor an answer that carries them is logged.
// A Secret of that name is rewritten, handed to the job or deleted only when it carries
// jobs.WriteOnlyEnvLabel naming the job, which a JSON patch's test operation checks in the very
// request that changes it: another Secret of the name is never touched.

var secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// NotTheJobsSecretError says that a Secret of the name the job's write-only variables need exists
// and is not the job's.
type NotTheJobsSecretError struct{ Namespace, Name, Job string }

func (e *NotTheJobsSecretError) Error() string {
	return fmt.Sprintf("Secret %s/%s exists and does not hold the write-only variables of job %s (it has no label %s=%s): "+
		"the provider neither reads nor overwrites it. Rename the job, or delete or rename that Secret.",
		e.Namespace, e.Name, e.Job, jobs.WriteOnlyEnvLabel, e.Job)
}

// WriteJobSecret creates, or rewrites whole, the Secret of the job's write-only variables with
// values and the version they are of; with owner, it is handed to the job.
func (c *Client) WriteJobSecret(ctx context.Context, namespace, job string, version int64, values map[string]string, owner *metav1.OwnerReference) error {
	data := map[string]any{}
	for k, v := range values {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	name := jobs.WriteOnlyEnvSecret(job)
	annotations := map[string]any{jobs.WriteOnlyEnvAnnotation: strconv.FormatInt(version, 10)}
	meta := map[string]any{"name": name, "namespace": namespace, "annotations": annotations,
		"labels": map[string]any{jobs.ManagedByLabel: jobs.ManagedByValue, jobs.WriteOnlyEnvLabel: job}}
	ops := []jsonPatchOp{{Op: "add", Path: "/data", Value: data}, {Op: "add", Path: "/metadata/annotations", Value: annotations}}
	if owner != nil {
		meta["ownerReferences"] = []any{ownerValue(*owner)}
		ops = append(ops, jsonPatchOp{Op: "add", Path: "/metadata/ownerReferences", Value: []any{ownerValue(*owner)}})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque", "data": data}}
	dyn, err := c.dynamic()
	if err != nil {
		return err
	}
	what := "Secret " + namespace + "/" + name
	tflog.Debug(ctx, "CREATE "+what+" (its values are not logged)")
	defer c.wrote(secretGVR, namespace)
	err = retry(ctx, "CREATE "+what, func() error {
		_, err := dyn.Resource(secretGVR).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		return err
	})
	if apierrors.IsAlreadyExists(err) {
		_, err = c.patchJobSecret(ctx, namespace, job, ops)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}

// OwnJobSecret hands the Secret of the job's write-only variables to the job.
func (c *Client) OwnJobSecret(ctx context.Context, namespace, job string, owner metav1.OwnerReference) error {
	_, err := c.patchJobSecret(ctx, namespace, job, []jsonPatchOp{{Op: "add", Path: "/metadata/ownerReferences", Value: []any{ownerValue(owner)}}})
	if err != nil {
		return fmt.Errorf("handing Secret %s/%s to its job: %w", namespace, jobs.WriteOnlyEnvSecret(job), err)
	}
	return nil
}

// DeleteJobSecret deletes the Secret of the job's write-only variables if it is there and the
// job's; another Secret of the name is left alone.
func (c *Client) DeleteJobSecret(ctx context.Context, namespace, job string) error {
	uid, err := c.patchJobSecret(ctx, namespace, job, nil)
	var notOurs *NotTheJobsSecretError
	switch {
	case apierrors.IsNotFound(err) || errors.As(err, &notOurs):
		return nil
	case err != nil:
		return err
	}
	t := Target{GVR: secretGVR, Kind: "Secret", Namespace: namespace, Name: jobs.WriteOnlyEnvSecret(job), BackgroundDeletion: true}
	return c.Delete(ctx, t, uid)
}

// jsonPatchOp is one operation of a JSON patch (RFC 6902).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// patchJobSecret applies ops to the Secret of the job's write-only variables, after a test that it
// is the job's, and returns its UID. The answer, which carries the values, is dropped unread.
func (c *Client) patchJobSecret(ctx context.Context, namespace, job string, ops []jsonPatchOp) (types.UID, error) {
	label := "/metadata/labels/" + strings.ReplaceAll(strings.ReplaceAll(jobs.WriteOnlyEnvLabel, "~", "~0"), "/", "~1")
	patch, err := json.Marshal(append([]jsonPatchOp{{Op: "test", Path: label, Value: job}}, ops...))
	if err != nil {
		return "", err
	}
	dyn, err := c.dynamic()
	if err != nil {
		return "", err
	}
	name := jobs.WriteOnlyEnvSecret(job)
	tflog.Debug(ctx, "PATCH Secret "+namespace+"/"+name+" (its values are not logged)")
	defer c.wrote(secretGVR, namespace)
	var uid types.UID
	err = retry(ctx, "PATCH Secret "+namespace+"/"+name, func() error {
		obj, err := dyn.Resource(secretGVR).Namespace(namespace).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if err == nil {
			uid = obj.GetUID()
		}
		return err
	})
	// A test that fails (the label is missing or names another job) is refused as invalid, with
	// the path it tested (gopkg.in/evanphx/json-patch.v4, which the API server applies patches with).
	if apierrors.IsInvalid(err) && strings.Contains(err.Error(), label) {
		return "", &NotTheJobsSecretError{Namespace: namespace, Name: name, Job: job}
	}
	return uid, err
}

// ownerValue is an owner reference as an object's metadata holds it.
func ownerValue(o metav1.OwnerReference) map[string]any {
	return map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "name": o.Name, "uid": string(o.UID),
		"controller": ptr.Deref(o.Controller, false), "blockOwnerDeletion": ptr.Deref(o.BlockOwnerDeletion, false)}
}
