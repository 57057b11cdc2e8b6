package kueue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Kueue's configuration, as an installation keeps it: which integrations run, and what of a pod's
// requests is counted, as Kueue v0.19.2 counts it (excluded prefixes dropped first, then each
// transformation's outputs added, its input kept or replaced); what the prediction does not model
// is named.
func TestKueueConfigSaysWhatKueueManagesAndCounts(t *testing.T) {
	c, err := ParseConfig([]byte(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
integrations:
  frameworks: ["batch/job", "kubeflow.org/mpijob", "trainer.kubeflow.org/trainjob"]
resources:
  excludeResourcePrefixes: ["example.com/"]
  transformations:
  - input: nvidia.com/mig-1g.5gb
    strategy: Replace
    outputs:
      example.com/ignored: "1"
      nvidia.com/gpu: 250m
  - input: amd.com/gpu
    outputs:
      accelerators: "2"
fairSharing: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Manages("kubeflow.org/mpijob") || c.Manages("kubeflow.org/pytorchjob") {
		t.Errorf("Manages: mpijob %v, pytorchjob %v", c.Manages("kubeflow.org/mpijob"), c.Manages("kubeflow.org/pytorchjob"))
	}
	got := c.Counted(corev1.ResourceList{"cpu": resource.MustParse("2"), "example.com/fpga": resource.MustParse("1"),
		"nvidia.com/mig-1g.5gb": resource.MustParse("4"), "amd.com/gpu": resource.MustParse("3")})
	want := map[string]string{"cpu": "2", "nvidia.com/gpu": "1", "example.com/ignored": "4", "amd.com/gpu": "3", "accelerators": "6"}
	have := map[string]string{}
	for name, q := range got {
		have[string(name)] = q.String()
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("Counted (-want +got):\n%s", diff)
	}
	if u := c.Unmodeled(); len(u) != 1 {
		t.Errorf("Unmodeled: %v, want fair sharing alone", u)
	}
	bare, err := ParseConfig([]byte("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !bare.Manages("batch/job") || bare.Manages("kubeflow.org/mpijob") || len(bare.Unmodeled()) != 0 {
		t.Errorf("a configuration without integrations runs %v and leaves %v unmodeled", bare.Frameworks, bare.Unmodeled())
	}
}
