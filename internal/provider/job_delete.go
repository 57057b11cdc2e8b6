package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// delete deletes the job object Terraform made (by UID), with its TensorBoard, and waits within
// the delete timeout until they, their pods and what the operator made for the job are gone.
// Its dependents (an elastic job's Services) are deleted by name too, as an imported job's may
// have no owner reference; but only those that are the job's, owned by it or made by this
// provider: one of that name that is somebody else's is left alone, with a warning.
func (r *jobResource) delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse, m jobModel) {
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := m.job()
	deleteDefault := defaultTimeout
	if g, ok := m.(withGracePeriod); ok {
		deleteDefault += g.gracePeriod()
	}
	limit, diags := f.Timeouts.Delete(ctx, deleteDefault)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := r.target(f)
	t.UID = k8stypes.UID(f.UID.ValueString())
	if err := r.client.Delete(ctx, t, t.UID); err != nil {
		resp.Diagnostics.AddError("Error deleting "+t.String(), err.Error())
		return
	}
	targets := f.deletionTargets(t)
	for _, d := range r.kind.Dependents(t.Name) {
		dependent := dependentTarget(t, d)
		left, err := r.client.DeleteIf(ctx, dependent, r.theJobs(t, d))
		if err != nil {
			resp.Diagnostics.AddError("Error deleting "+dependent.String(), err.Error())
			return
		}
		if left != nil {
			resp.Diagnostics.AddWarning(dependent.Kind+" left in place",
				fmt.Sprintf("%s was not created by this provider and is not owned by %s, so destroy did not delete it.", dependent, t))
			continue
		}
		targets = append(targets, dependent)
	}
	r.waitDeleted(ctx, &resp.Diagnostics, targets...)
}
