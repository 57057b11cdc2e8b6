package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// withDependents is a model of a kind whose job has dependents (an elastic job's Services):
// their names, as they exist in the cluster (refresh) or as the plan wants them (all).
type withDependents interface {
	dependents() *types.List
}

// dependentsAttribute lists a job's dependents as KIND/NAME: planned as wanted says from the
// plan, so that one missing from the state (deleted outside Terraform) plans an update that
// makes it again, and one no longer wanted, an update that removes it.
func dependentsAttribute(wanted func(ctx context.Context, plan tfsdk.Plan) ([]jobs.Dependent, bool, diag.Diagnostics), description string) schema.Attribute {
	return schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: description,
		PlanModifiers: []planmodifier.List{dependentsPlan{wanted}}}
}

type dependentsPlan struct {
	// wanted are the dependents the plan asks for; ok is false while they are not known.
	wanted func(ctx context.Context, plan tfsdk.Plan) (deps []jobs.Dependent, ok bool, diags diag.Diagnostics)
}

func (dependentsPlan) Description(context.Context) string {
	return "the dependents the job's settings ask for"
}

func (p dependentsPlan) MarkdownDescription(ctx context.Context) string { return p.Description(ctx) }

func (p dependentsPlan) PlanModifyList(ctx context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	deps, ok, diags := p.wanted(ctx, req.Plan)
	resp.Diagnostics.Append(diags...)
	if ok {
		resp.PlanValue = dependentsValue(deps)
	}
}

// dependentsValue lists dependents as the dependents attribute does.
func dependentsValue(deps []jobs.Dependent) types.List {
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = d.String()
	}
	return stringListValue(names)
}

// dependentTarget is the job's dependent d, with the job's pods.
func dependentTarget(job kube.Target, d jobs.Dependent) kube.Target {
	// Nothing of what a Service or NetworkPolicy owns is named after it (EndpointSlices have
	// generated names): it is deleted in the background.
	return kube.Target{GVR: d.GVR, Kind: d.Kind, Namespace: job.Namespace, Name: d.Name, PodSelector: job.PodSelector, JobName: job.Name,
		BackgroundDeletion: true}
}

// targetsOf are the targets of the dependents a spec built.
func (r *jobResource) targetsOf(job kube.Target, objs []*unstructured.Unstructured) ([]kube.Target, []jobs.Dependent, error) {
	targets := make([]kube.Target, len(objs))
	deps := make([]jobs.Dependent, len(objs))
	for i, obj := range objs {
		d, err := r.kind.DependentOf(obj)
		if err != nil {
			return nil, nil, err
		}
		targets[i], deps[i] = dependentTarget(job, d), d
	}
	return targets, deps, nil
}

// existingDependents are the job's dependents that exist and are the job's (owned by it or made
// by this provider), as the dependents attribute lists them.
func (r *jobResource) existingDependents(ctx context.Context, f *jobFields, diags *diag.Diagnostics) types.List {
	job := r.target(f)
	var found []jobs.Dependent
	for _, d := range r.kind.Dependents(job.Name) {
		t := dependentTarget(job, d)
		obj, err := r.client.Read(ctx, t)
		if err != nil {
			diags.AddError("Error reading "+t.String(), err.Error())
			continue
		}
		if obj != nil && obj.GetDeletionTimestamp() == nil && r.theJobs(job, d)(obj) {
			found = append(found, d)
		}
	}
	return dependentsValue(found)
}

// reconcileDependents makes the job's dependents those the plan built: one deleted behind
// Terraform's back (an elastic job's rendezvous Service) is made again, owned by the job (the
// running workers find it again by name), and one no longer asked for (the etcd's
// NetworkPolicy turned off) is deleted if it is the job's. It returns the dependents made.
func (r *jobResource) reconcileDependents(ctx context.Context, f *jobFields, job *unstructured.Unstructured, dependents []*unstructured.Unstructured,
	diags *diag.Diagnostics) types.List {
	jt := r.target(f)
	targets, wanted, err := r.targetsOf(jt, dependents)
	if err != nil {
		diags.AddError("Invalid "+r.kind.Object, err.Error())
		return types.ListNull(types.StringType)
	}
	for i, t := range targets {
		existing, err := r.client.Get(ctx, t)
		if err != nil {
			diags.AddError("Error reading "+t.String(), err.Error())
			continue
		}
		if existing != nil {
			continue
		}
		d := dependents[i]
		d.SetOwnerReferences([]metav1.OwnerReference{ownerReference(job)})
		if _, err := r.client.Create(ctx, t, d, youngerThan(defaultTimeout)); err != nil {
			diags.AddError("Error creating "+t.String(), roleNeeded(alreadyExistsDetail(t, f.ID.ValueString(), err), err, elasticJobsRole, t.Namespace))
		}
	}
	for _, d := range r.kind.Dependents(jt.Name) {
		if slices.Contains(wanted, d) {
			continue
		}
		t := dependentTarget(jt, d)
		if _, err := r.client.DeleteIf(ctx, t, r.theJobs(jt, d)); err != nil {
			diags.AddError("Error deleting "+t.String(), err.Error())
		}
	}
	return dependentsValue(wanted)
}

// theJobs says whether an object under the name of the job's dependent d is the job's: owned by
// it, made by this provider (an imported job's dependents may have no owner reference), or made
// by hand for this job alone (a Service selecting exactly its pods of the role, see
// jobs.Kind.MadeFor).
func (r *jobResource) theJobs(job kube.Target, d jobs.Dependent) func(*unstructured.Unstructured) bool {
	return func(obj *unstructured.Unstructured) bool {
		return ownedBy(obj, job) || jobs.IsManaged(obj) || r.kind.MadeFor(job.Name, d, obj)
	}
}

// ownedBy says whether obj has an owner reference to the target's object.
func ownedBy(obj *unstructured.Unstructured, owner kube.Target) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == owner.Kind && ref.Name == owner.Name {
			return true
		}
	}
	return false
}
