package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// warnUnexpressed warns about what the job's pods hold that its resource cannot say (an init
// container, a volume, a security context, the etcd command of an elastic job made by hand):
// import keeps it on the running job, but a replacement would make the job without it. The list
// resources and the first refresh after an import say it.
func warnUnexpressed(ctx context.Context, kind *jobs.Kind, m jobModel, live *unstructured.Unstructured, diags *diag.Diagnostics) {
	if gaps := unexpressed(ctx, kind, m, live); len(gaps) > 0 {
		diags.AddWarning(fmt.Sprintf("%s %s/%s: the configuration cannot say everything it holds", kind.Object, live.GetNamespace(), live.GetName()),
			"training_"+kind.Name+"_job has no attribute for: "+strings.Join(gaps, "; ")+". An import keeps them on the running job, "+
				"but a change that replaces the job would make it without them.")
	}
}

// unexpressed is what the live job holds that the job m describes would not (jobs.Kind.Unexpressed);
// nothing when m does not build a job.
func unexpressed(ctx context.Context, kind *jobs.Kind, m jobModel, live *unstructured.Unstructured) []string {
	spec, diags := m.spec(ctx)
	if diags.HasError() {
		return nil
	}
	rebuilt, _, err := spec.Build()
	if err != nil {
		return nil
	}
	return kind.Unexpressed(live, rebuilt)
}

// warnDropped warns, in the plan of a replacement, about what the live job holds that its
// resource cannot say (jobs.Kind.Unexpressed: an init container added with kubectl, a field of
// its operator's): the job made in its place will not have it. It costs the plan one read of the
// job, only for a replacement; a job that cannot be read is left to the apply.
func (r *jobResource) warnDropped(ctx context.Context, resp *resource.ModifyPlanResponse, p planned) {
	prior := p.prior
	if prior == nil || p.next == nil || r.client == nil || len(r.client.UnknownSettings()) > 0 || !p.replacing() {
		return
	}
	t := r.target(prior.job())
	live, err := r.client.Get(ctx, t)
	if err != nil || live == nil {
		tflog.Debug(ctx, "what a replacement drops is not checked: the job cannot be read", map[string]any{"error": fmt.Sprint(err)})
		return
	}
	if gaps := unexpressed(ctx, r.kind, prior, live); len(gaps) > 0 {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Replacing %s drops what its configuration cannot say", t),
			"training_"+r.kind.Name+"_job has no attribute for what the running job holds in: "+strings.Join(gaps, "; ")+
				". It was set outside Terraform (kubectl, another tool); the job this plan makes in its place will not have it.")
	}
}
