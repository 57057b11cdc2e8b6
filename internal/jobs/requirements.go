package jobs

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RequirementsURL is the provider's Requirements table, which the errors about a missing
// operator name.
const RequirementsURL = "https://registry.terraform.io/providers/kubetrain/training/latest/docs#requirements"

// Requirement is what serves an API the provider speaks: the operator a cluster must run, from
// which release it serves the version the provider speaks, and the releases tested.
type Requirement struct {
	Operator, Since string
	Tested          Tested
}

// Tested is a part of a cluster at the releases the provider's tests run it at: the local
// cluster's (Current) and its previous generation's (Previous, empty where there is one only).
// They are the releases of Module that the local cluster builds, from the go.mod of its
// component (cluster/components/COMPONENT and cluster/generations/previous/COMPONENT), and
// TestTestedReleasesAreWhatTheLocalClusterBuilds holds the two together; the docs' Requirements
// tables are tested against these.
type Tested struct {
	Module, Component string
	Current, Previous string
}

// The releases tested, one per part the local cluster builds.
var (
	TestedKubernetes          = Tested{Module: "k8s.io/kubernetes", Component: "kubernetes", Current: "v1.37.2", Previous: "v1.32.13"}
	TestedMPIOperator         = Tested{Module: "github.com/kubeflow/mpi-operator", Component: "mpi-operator", Current: "v0.8.2", Previous: "v0.7.0"}
	TestedTrainingOperator    = Tested{Module: "github.com/kubeflow/training-operator", Component: "training-operator", Current: "v1.9.0", Previous: "v1.8.1"}
	TestedTrainer             = Tested{Module: "github.com/kubeflow/trainer/v2", Component: "trainer", Current: "v2.3.0", Previous: "v2.2.0"}
	TestedJobSet              = Tested{Module: "sigs.k8s.io/jobset", Component: "jobset", Current: "v0.12.0", Previous: "v0.11.1"}
	TestedFrameworkController = Tested{Module: "github.com/microsoft/frameworkcontroller", Component: "frameworkcontroller", Current: "v1.0.1"}
	TestedKueue               = Tested{Module: "sigs.k8s.io/kueue", Component: "kueue", Current: "v0.19.2", Previous: "v0.17.0"}
)

// TestedParts are the parts tested, Kubernetes first.
var TestedParts = []Tested{TestedKubernetes, TestedMPIOperator, TestedTrainingOperator, TestedTrainer, TestedJobSet,
	TestedFrameworkController, TestedKueue}

// Releases says the releases tested, as an error message names them: "v0.8.2 and v0.7.0".
func (t Tested) Releases() string {
	if t.Previous == "" {
		return t.Current
	}
	return t.Current + " and " + t.Previous
}

// Minor is a Kubernetes release as its docs name it: v1.37.2 is 1.37.
func Minor(release string) string {
	major, rest, _ := strings.Cut(strings.TrimPrefix(release, "v"), ".")
	minor, _, _ := strings.Cut(rest, ".")
	return major + "." + minor
}

// requirements are by API group and resource; a group's own entry (resource "") covers every
// resource of the group.
var requirements = map[schema.GroupResource]Requirement{
	{Group: "kubeflow.org", Resource: "mpijobs"}:     {Operator: "mpi-operator", Since: "v0.4.0", Tested: TestedMPIOperator},
	{Group: "kubeflow.org", Resource: "tfjobs"}:      {Operator: "training-operator", Since: "v1.0.0", Tested: TestedTrainingOperator},
	{Group: "kubeflow.org", Resource: "pytorchjobs"}: {Operator: "training-operator", Since: "v1.0.0", Tested: TestedTrainingOperator},
	{Group: "trainer.kubeflow.org"}:                  {Operator: "Kubeflow Trainer", Since: "v2.0.0", Tested: TestedTrainer},
	{Group: "jobset.x-k8s.io"}:                       {Operator: "JobSet (with Kubeflow Trainer)", Since: "v0.8.0", Tested: TestedJobSet},
	{Group: "frameworkcontroller.microsoft.com"}:     {Operator: "FrameworkController", Since: "v1.0.0", Tested: TestedFrameworkController},
	{Group: "kueue.x-k8s.io"}:                        {Operator: "Kueue", Since: "v0.15.0", Tested: TestedKueue},
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
		what, r.Operator, r.Since, r.Tested.Releases(), gvr.GroupVersion(), RequirementsURL)
}
