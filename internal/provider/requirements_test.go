package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A cluster without an operator, or with one serving an older API version, fails the plan of
// what needs it, saying which operator, which version and where the Requirements are; what
// does not need it plans as ever. The cluster is the tests' own seen through a proxy that hides
// mpi-operator's kubeflow.org/v2beta1 and Kueue's v1beta2 (Kueue then serves v1beta1 alone, as
// Kueue did before v0.15). A Kueue object's create, which no plan check reads, fails at apply
// with the same words, and nothing is made.
func TestAccRequirements_aMissingOperatorFailsThePlanSayingWhatToInstall(t *testing.T) {
	a := newAPI(t)
	_, kubeconfig := startProxy(t, apiproxy.Options{Hide: []string{"kubeflow.org/v2beta1", "kueue.x-k8s.io/v1beta2"}})
	provider := fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig)
	const flavor = "tf-acc-requirements"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := a.get(kueue.ResourceFlavorGVR, "", flavor); err == nil {
				return fmt.Errorf("ResourceFlavor %s was made", flavor)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: provider + mpiJobBlock("test", mpiJobName(), ""), PlanOnly: true,
				ExpectError: wrapped(`The cluster does not serve mpijobs\.kubeflow\.org.*at kubeflow\.org/v2beta1.*serves kubeflow\.org at \[v1\] only.*mpi-operator v0\.4\.0 or later \(tested with v0\.8\.2 and v0\.7\.0\).*docs#requirements`),
			},
			{
				Config: provider + `
resource "training_pytorch_job" "queued" {
  name         = "tf-acc-requirements-queued"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 1
  queue_name   = "team"
}
`, PlanOnly: true,
				ExpectError: wrapped(`localqueues at kueue\.x-k8s\.io/v1beta2.*serves kueue\.x-k8s\.io at \[v1beta1\] only.*Kueue v0\.15\.0 or later`),
			},
			{
				// A TFJob needs neither: its plan goes ahead.
				Config: provider + `
resource "training_tf_job" "plain" {
  name         = "tf-acc-requirements-tf"
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 1
}
`, PlanOnly: true, ExpectNonEmptyPlan: true,
			},
			{
				Config:      provider + fmt.Sprintf("resource \"training_resource_flavor\" \"f\" {\n  name = %q\n}\n", flavor),
				ExpectError: wrapped(`resourceflavors at kueue\.x-k8s\.io/v1beta2.*Kueue v0\.15\.0 or later`),
			},
		},
	})
}

// wrapped matches an error whose words Terraform may have wrapped onto several lines.
func wrapped(pattern string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)` + strings.ReplaceAll(pattern, " ", `\s+`))
}
