package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// warnUnexpressed warns about what the job's pods hold that its resource cannot say (an init
// container, a volume, a security context, the etcd command of an elastic job made by hand):
// import keeps it on the running job, but a replacement would make the job without it. The list
// resources and the first refresh after an import say it.
func warnUnexpressed(ctx context.Context, kind *jobs.Kind, m jobModel, live *unstructured.Unstructured, diags *diag.Diagnostics) {
	spec, d := m.spec(ctx)
	if d.HasError() {
		return
	}
	rebuilt, _, err := spec.Build()
	if err != nil {
		return
	}
	if gaps := kind.Unexpressed(live, rebuilt); len(gaps) > 0 {
		diags.AddWarning(fmt.Sprintf("%s %s/%s: the configuration cannot say everything it holds", kind.Object, live.GetNamespace(), live.GetName()),
			"training_"+kind.Name+"_job has no attribute for: "+strings.Join(gaps, "; ")+". An import keeps them on the running job, "+
				"but a change that replaces the job would make it without them.")
	}
}
