package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// create makes the job the plan describes: its dependents first (an elastic job's Services: a
// worker must never look its rendezvous up before it exists), then the job, saved in state at
// once so that nothing is ever orphaned, then the dependents handed to the job as their owner,
// its TensorBoard, and the wait.
func (r *jobResource) create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, m jobModel) {
	resp.Diagnostics.Append(getPlanModel(ctx, req.Plan, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := m.job()
	if s, ok := m.(suspendable); ok {
		s.suspendKnown()
	}
	timeout, diags := f.Timeouts.Create(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// What the job needs may be made by this apply beside it (job_needs.go): it is waited for.
	if !r.awaitServed(ctx, &resp.Diagnostics) {
		return
	}
	if rs, ok := m.(resolver); ok && !rs.resolve(ctx, r.client, &resp.Diagnostics) {
		return
	}
	spec, obj, dependents, ok := r.build(ctx, m, &resp.Diagnostics)
	if !ok {
		return
	}

	t := r.target(f)
	importID := t.Namespace + "/" + t.Name
	if queue := jobs.QueueName(obj); queue != "" && !r.awaitQueue(ctx, t.Namespace, queue, &resp.Diagnostics) {
		return
	}
	services, made, err := r.targetsOf(t, dependents)
	if err != nil {
		resp.Diagnostics.AddError("Invalid "+r.kind.Object, err.Error())
		return
	}
	// The write-only variables' Secret is written before the job, so that its pods find it.
	wo := spec.Pods().WriteOnlyEnv
	if wo != nil && !r.secrets().write(ctx, req.Config, t, wo, nil, &resp.Diagnostics) {
		return
	}
	young := youngerThan(timeout)
	for i, d := range dependents {
		if _, err := r.client.Create(ctx, services[i], d, young); err != nil {
			resp.Diagnostics.AddError("Error creating "+services[i].String(),
				roleNeeded(alreadyExistsDetail(services[i], importID, err), err, elasticJobsRole, t.Namespace)+" Nothing was created.")
			r.removeUnowned(ctx, services[:i], &resp.Diagnostics)
			r.secrets().delete(ctx, t, wo, &resp.Diagnostics)
			return
		}
	}
	created, err := r.client.Create(ctx, t, obj, r.notStartedAndYoungerThan(timeout))
	if err != nil {
		resp.Diagnostics.AddError("Error creating "+t.String(), alreadyExistsDetail(t, importID, err))
		r.removeUnowned(ctx, services, &resp.Diagnostics)
		r.secrets().delete(ctx, t, wo, &resp.Diagnostics)
		return
	}
	f.ID = types.StringValue(importID)
	f.UID = types.StringValue(string(created.GetUID()))
	resp.Diagnostics.Append(f.set(jobs.Status{Phase: jobs.Pending})...)
	if tb := tensorBoardOf(m); tb != nil {
		tb.TensorBoardURL = types.StringNull()
	}
	// Saved before anything else can fail: from here on the job is in state (tainted if need be),
	// and destroy removes its dependents with it, by name, as this provider's.
	resp.Diagnostics.Append(setModel(ctx, &resp.State, m)...)
	r.setIdentity(ctx, resp.Identity, m.job(), &resp.Diagnostics)

	if len(services) > 0 {
		owner, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{ownerReference(created)}}})
		if err != nil {
			resp.Diagnostics.AddError("Error making the owner reference of "+t.String(), err.Error())
			return
		}
		for _, st := range services {
			if _, err := r.client.Patch(ctx, st, k8stypes.MergePatchType, owner); err != nil {
				resp.Diagnostics.AddError("Error handing "+st.String()+" to its "+r.kind.Object, err.Error())
				return
			}
		}
	}
	if wo != nil {
		if err := r.client.OwnJobSecret(ctx, t.Namespace, t.Name, ownerReference(created)); err != nil {
			resp.Diagnostics.AddError("Error handing the write-only variables' Secret to "+t.String(), err.Error())
			return
		}
	}
	if d, ok := m.(withDependents); ok {
		*d.dependents() = dependentsValue(made)
	}
	if tb := tensorBoardOf(m); tb != nil {
		r.createTensorBoard(ctx, tb, created, spec.Pods(), &resp.Diagnostics)
	}
	r.settle(ctx, m, spec, actionCreate, f.WaitFor.ValueString(), created, &resp.Diagnostics)
	resp.Diagnostics.Append(setModel(ctx, &resp.State, m)...)
	r.setIdentity(ctx, resp.Identity, m.job(), &resp.Diagnostics)
}

// noQueue says, when the create has waited for the job's LocalQueue in vain, what the namespace
// has instead: Kueue would hold a job submitted to no queue forever.
func (r *jobResource) noQueue(ctx context.Context, namespace, queue string, diags *diag.Diagnostics) {
	names, err := r.client.Names(ctx, kueue.LocalQueueGVR, namespace)
	switch {
	case err != nil:
		diags.AddAttributeError(path.Root("queue_name"), "No LocalQueue "+queue,
			fmt.Sprintf("queue_name names LocalQueue %q, which cannot be found in namespace %s, and the LocalQueues there cannot be listed "+
				"(is Kueue installed?): %v.%s Nothing was created.", queue, namespace, err, waitedForIt))
	case len(names) == 0:
		diags.AddAttributeError(path.Root("queue_name"), "No LocalQueue "+queue,
			fmt.Sprintf("queue_name names LocalQueue %q, but namespace %s has no LocalQueue at all: Kueue would hold the job forever. "+
				"Make one there (training_local_queue).%s Nothing was created.", queue, namespace, waitedForIt))
	default:
		diags.AddAttributeError(path.Root("queue_name"), "No LocalQueue "+queue,
			fmt.Sprintf("queue_name names LocalQueue %q, which namespace %s does not have, so Kueue would hold the job forever. "+
				"The LocalQueues there: %s.%s Nothing was created.", queue, namespace, strings.Join(names, ", "), waitedForIt))
	}
}

// youngerThan allows the adoption of an object made from the same configuration by an earlier
// apply only if that apply could still have been creating it: it is younger than the create
// timeout. An older one is another workspace's, or a job whose state was removed.
func youngerThan(limit time.Duration) func(*unstructured.Unstructured) error {
	return func(existing *unstructured.Unstructured) error {
		if age := time.Since(existing.GetCreationTimestamp().Time); age > limit {
			return fmt.Errorf("it was made %s ago, longer ago than the create timeout (%s)", age.Round(time.Second), limit)
		}
		return nil
	}
}

// notStartedAndYoungerThan allows the adoption of a job only if, besides being young enough,
// it has not started or finished: training that ran is never silently attached to a new
// resource.
func (r *jobResource) notStartedAndYoungerThan(limit time.Duration) func(*unstructured.Unstructured) error {
	young := youngerThan(limit)
	return func(existing *unstructured.Unstructured) error {
		if err := young(existing); err != nil {
			return err
		}
		status, err := r.kind.Status(jobs.Observed{Object: existing}, time.Now())
		if err != nil {
			return err
		}
		if status.Phase != jobs.Pending && status.Phase != jobs.Suspended && status.Phase != jobs.Queued {
			return fmt.Errorf("it has started (%s)", status.Phase)
		}
		return nil
	}
}

func ownerReference(obj *unstructured.Unstructured) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		BlockOwnerDeletion: ptr.To(true)}
}

// removeUnowned deletes the dependents a failed create made or adopted (this provider's, not
// yet owned by a job; anything else of those names is left alone) and waits until they are gone,
// so that the failed apply leaves nothing behind.
func (r *jobResource) removeUnowned(ctx context.Context, targets []kube.Target, diags *diag.Diagnostics) {
	var removed []kube.Target
	for _, t := range targets {
		left, err := r.client.DeleteIf(ctx, t, func(obj *unstructured.Unstructured) bool {
			return jobs.IsManaged(obj) && len(obj.GetOwnerReferences()) == 0
		})
		if err != nil {
			diags.AddError("Error removing "+t.String()+" after the failed create", err.Error()+"; delete it, or run terraform apply again, which adopts it.")
			return
		}
		if left == nil {
			removed = append(removed, t)
		}
	}
	r.waitDeleted(ctx, r.client, diags, removed...)
}

// The opt-in roles of examples/rbac/provider-rbac.yaml: the objects a job may have beside it
// (an elastic job's Services and NetworkPolicy, a TensorBoard) are written under their own roles.
const (
	elasticJobsRole  = "terraform-provider-training-elastic-jobs"
	tensorBoardsRole = "terraform-provider-training-tensorboards"
)

// roleNeeded is detail, followed, where the API server refused err as forbidden, by the role
// of the provider's that grants it.
func roleNeeded(detail string, err error, role, namespace string) string {
	if !apierrors.IsForbidden(err) {
		return detail
	}
	return fmt.Sprintf("%s. The provider's identity needs the ClusterRole %s (from the provider's RBAC example) bound in namespace %s.",
		strings.TrimSuffix(detail, "."), role, namespace)
}

// alreadyExistsDetail says what to do when an object cannot be created. The client has already
// adopted an object of that name if this provider created it from the same configuration, so
// one that still stands in the way is being deleted, is a leftover from another configuration,
// or is somebody else's: the provider does not take it over silently.
func alreadyExistsDetail(t kube.Target, importID string, err error) string {
	var exists *kube.ExistsError
	if !errors.As(err, &exists) {
		return err.Error()
	}
	existing := exists.Existing
	switch {
	case existing != nil && existing.GetDeletionTimestamp() != nil:
		return fmt.Sprintf("%s already exists and is being deleted (an earlier destroy or replacement). Run terraform apply again once it is gone.", t)
	case existing != nil && exists.NotAdopted != nil:
		return fmt.Sprintf("%s already exists: this provider created it from the same configuration, but not in this apply, and %v. "+
			"It was not taken over (it may be another workspace's, or a job whose state was removed) and was not changed. "+
			"Take it over with: terraform import <address> %s (or delete it)", t, exists.NotAdopted, importID)
	case existing != nil && jobs.IsManaged(existing):
		return fmt.Sprintf("%s already exists: this provider created it, but from a different configuration (perhaps an apply that was "+
			"interrupted, or another workspace). It was not changed. Take it over with: terraform import <address> %s (or delete it)", t, importID)
	}
	return fmt.Sprintf("%s already exists and was not created by this provider, so it was not changed. Choose another name, "+
		"or take the job over with: terraform import <address> %s", t, importID)
}
