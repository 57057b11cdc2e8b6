package jobs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RequirementsURL is the provider's Requirements table, which the errors about a missing
// operator name.
const RequirementsURL = "https://registry.terraform.io/providers/kubetrain/training/latest/docs#requirements"

// Requirement is what serves an API the provider speaks: the operator a cluster must run, from
// which release it serves the version the provider speaks, and the release tested.
type Requirement struct {
	Operator, Since, Tested string
}

// requirements are by API group and resource; a group's own entry (resource "") covers every
// resource of the group.
var requirements = map[schema.GroupResource]Requirement{
	{Group: "kubeflow.org", Resource: "mpijobs"}:     {Operator: "mpi-operator", Since: "v0.4.0", Tested: "v0.8.2 and v0.7.0"},
	{Group: "kubeflow.org", Resource: "tfjobs"}:      {Operator: "training-operator", Since: "v1.0.0", Tested: "v1.9.0 and v1.8.1"},
	{Group: "kubeflow.org", Resource: "pytorchjobs"}: {Operator: "training-operator", Since: "v1.0.0", Tested: "v1.9.0 and v1.8.1"},
	{Group: "trainer.kubeflow.org"}:                  {Operator: "Kubeflow Trainer", Since: "v2.0.0", Tested: "v2.3.0 and v2.2.0"},
	{Group: "jobset.x-k8s.io"}:                       {Operator: "JobSet (with Kubeflow Trainer)", Since: "v0.8.0", Tested: "v0.12.0 and v0.11.1"},
	{Group: "frameworkcontroller.microsoft.com"}:     {Operator: "FrameworkController", Since: "v1.0.0", Tested: "v1.0.1"},
	{Group: "kueue.x-k8s.io"}:                        {Operator: "Kueue", Since: "v0.15.0", Tested: "v0.19.2 and v0.17.0"},
}

// RequirementOf is what serves gvr, if the provider knows.
func RequirementOf(gvr schema.GroupVersionResource) (Requirement, bool) {
	if r, ok := requirements[gvr.GroupResource()]; ok {
		return r, true
	}
	r, ok := requirements[schema.GroupResource{Group: gvr.Group}]
	return r, ok
}

// NotServedMessage says that the cluster does not serve gvr (served are the versions it serves
// the group at, none when it serves no version of it), what serves it, and where to look.
func NotServedMessage(gvr schema.GroupVersionResource, served []string) string {
	what := fmt.Sprintf("The cluster does not serve %s at %s", gvr.Resource, gvr.GroupVersion())
	switch {
	case len(served) > 0:
		what += fmt.Sprintf(" (it serves %s at %v only)", gvr.Group, served)
	default:
		what += fmt.Sprintf(" (it serves no version of %s)", gvr.Group)
	}
	r, ok := RequirementOf(gvr)
	if !ok {
		return what + ". See " + RequirementsURL + "."
	}
	return fmt.Sprintf("%s. It needs %s %s or later (tested with %s) installed, serving %s; see %s.",
		what, r.Operator, r.Since, r.Tested, gvr.GroupVersion(), RequirementsURL)
}
