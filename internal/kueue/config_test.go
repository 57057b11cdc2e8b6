package kueue

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Kueue's configuration, as an installation keeps it: which integrations run, and what of a pod's
// requests is counted, as Kueue v0.19.2 counts it (excluded prefixes dropped first, then each
// transformation's outputs added, its input kept or replaced); fair sharing with its preemption
// strategies; what the prediction does not model is named.
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
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
admissionFairSharing:
  usageHalfLifeTime: 168h
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
	if !c.FairSharing || !slices.Equal(c.FairSharingStrategies, []string{"LessThanInitialShare"}) {
		t.Errorf("fair sharing %v by %q, want on by LessThanInitialShare", c.FairSharing, c.FairSharingStrategies)
	}
	if u := c.Unmodeled(V017); len(u) != 1 || !strings.HasPrefix(u[0], "admission fair sharing") {
		t.Errorf("Unmodeled on Kueue v0.17: %v, want admission fair sharing alone (fair sharing is modelled)", u)
	}
	bare, err := ParseConfig([]byte("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !bare.Manages("batch/job") || bare.Manages("kubeflow.org/mpijob") || len(bare.Unmodeled(Current)) != 0 {
		t.Errorf("a configuration without integrations runs %v and leaves %v unmodeled", bare.Frameworks, bare.Unmodeled(Current))
	}
}

// Kueue v0.19 turned waitForPodsReady on where a v1beta2 configuration does not set it (its
// chart's does not): a workload whose pods are not all ready 30 minutes after its admission, or
// that loses a ready pod for 30 minutes, is evicted and requeued, and admission is not blocked
// (apis/config/v1beta2/defaults.go; CHANGELOG-0.19: "WaitForPodsReady is now enabled by
// default"). Before v0.19, and in a v1beta1 configuration, it is off unless enabled, and then
// blocks admission by default, which the admission prediction does not follow.
func TestWaitForPodsReadyIsOnByDefaultFromKueue019(t *testing.T) {
	parse := func(config string) *Config {
		t.Helper()
		c, err := ParseConfig([]byte(config))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	thirty := 30 * time.Minute
	for _, tc := range []struct {
		name    string
		config  *Config
		release Release
		want    PodsReady
	}{
		{"the chart's configuration on v0.19", parse("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"), Current,
			PodsReady{Enabled: true, Timeout: thirty, RecoveryTimeout: thirty}},
		{"the chart's configuration on v0.17", parse("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"), V017, PodsReady{}},
		{"a v1beta2 configuration that sets it", parse("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady:\n  timeout: 10m\n  blockAdmission: true\n"), Current,
			PodsReady{Enabled: true, Timeout: 10 * time.Minute, RecoveryTimeout: 10 * time.Minute, BlockAdmission: true}},
		{"a v1beta1 configuration that enables it", parse("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady:\n  enable: true\n"), Current,
			PodsReady{Enabled: true, Timeout: thirty, RecoveryTimeout: thirty, BlockAdmission: true}},
		{"a v1beta1 configuration without it", parse("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"), Current, PodsReady{}},
	} {
		if got := tc.config.PodsReadyOn(tc.release); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		blocks := len(tc.config.Unmodeled(tc.release)) == 1
		if blocks != tc.want.BlockAdmission {
			t.Errorf("%s: unmodeled %q; the prediction follows admission unless waitForPodsReady blocks it", tc.name, tc.config.Unmodeled(tc.release))
		}
	}
}
