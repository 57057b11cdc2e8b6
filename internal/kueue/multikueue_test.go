package kueue

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MultiKueue's objects read back as they were built, with the fields Kueue v0.19.2 expects: a
// kubeconfig from a Secret, the clusters in order, an admission check of MultiKueue's controller
// whose parameters name the config, a ClusterQueue's checks in admissionChecksStrategy. What
// Kueue's CRDs refuse is refused before anything is sent.
func TestMultiKueueObjectsRoundTripAndRefuseWhatKueueRefuses(t *testing.T) {
	c := MultiKueueClusterSpec{Name: "east", KubeconfigSecret: "east-kubeconfig"}
	obj, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterSource", "kubeConfig", "locationType"); got != "Secret" {
		t.Errorf("locationType %q", got)
	}
	if back, err := ReadMultiKueueCluster(obj); err != nil || back != c {
		t.Errorf("cluster read back %+v, %v", back, err)
	}
	_ = unstructured.SetNestedField(obj.Object, "Path", "spec", "clusterSource", "kubeConfig", "locationType")
	if _, err := ReadMultiKueueCluster(obj); err == nil || !strings.Contains(err.Error(), "not from a Secret") {
		t.Errorf("a kubeconfig file read as a Secret: %v", err)
	}
	cfg := MultiKueueConfigSpec{Name: "fleet", Clusters: []string{"east", "west"}}
	obj, err = cfg.Build()
	if err != nil {
		t.Fatal(err)
	}
	if back := ReadMultiKueueConfig(obj); !reflect.DeepEqual(back, cfg) {
		t.Errorf("config read back %+v", back)
	}
	check := AdmissionCheckSpec{Name: "fleet", Config: "fleet"}
	obj, err = check.Build()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := ReadAdmissionCheck(obj); err != nil || back != check {
		t.Errorf("check read back %+v, %v", back, err)
	}
	_ = unstructured.SetNestedField(obj.Object, "kueue.x-k8s.io/provisioning-request", "spec", "controllerName")
	if _, err := ReadAdmissionCheck(obj); err == nil {
		t.Error("a provisioning check read as MultiKueue's")
	}
	queue := ClusterQueueSpec{Name: "q", AdmissionChecks: []string{"fleet"}, ResourceGroups: []ResourceGroup{{CoveredResources: []string{"cpu"},
		Flavors: []FlavorQuotas{{Name: "cpu", Resources: []Quota{{Name: "cpu", Nominal: "8"}}}}}}}
	obj, err = queue.Build()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := ReadClusterQueue(obj); err != nil || !reflect.DeepEqual(back.AdmissionChecks, queue.AdmissionChecks) {
		t.Errorf("queue's checks read back %v, %v", back.AdmissionChecks, err)
	}
	for what, err := range map[string]error{
		"a Secret name with a capital":    MultiKueueClusterSpec{Name: "x", KubeconfigSecret: "East"}.Check(),
		"no cluster":                      MultiKueueConfigSpec{Name: "x"}.Check(),
		"a cluster twice":                 MultiKueueConfigSpec{Name: "x", Clusters: []string{"a", "a"}}.Check(),
		"a config name with a dot":        AdmissionCheckSpec{Name: "x", Config: "a.b"}.Check(),
		"an admission check listed twice": ClusterQueueSpec{Name: "q", AdmissionChecks: []string{"a", "a"}}.Check(),
	} {
		if err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}
