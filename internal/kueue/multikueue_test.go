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

// A ProvisioningRequestConfig builds as Kueue's CRD takes it, its retry strategy written out, and
// reads back the same; one that leaves the strategy out reads Kueue's defaults. An AdmissionCheck
// of the provisioning controller names it and reads back as such; one naming both configs, or
// neither, is refused.
func TestProvisioningConfigAndCheckRoundTrip(t *testing.T) {
	s := ProvisioningRequestConfigSpec{Name: "dws", ProvisioningClass: "queued-provisioning.gke.io",
		Parameters: map[string]string{"ValidUntilSeconds": "3600"}, ManagedResources: []string{"nvidia.com/gpu"},
		RetryLimit: 0, RetryBaseSeconds: 30, RetryMaxSeconds: 600,
		NodeSelector: map[string]string{"cloud.google.com/gke-nodepool": "nodepool"}, PodSetMergePolicy: "IdenticalPodTemplates"}
	obj, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if back := ReadProvisioningRequestConfig(obj); !reflect.DeepEqual(back, s) {
		t.Errorf("read back\n%+v\nwant\n%+v", back, s)
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "retryStrategy")
	if back := ReadProvisioningRequestConfig(obj); back.RetryLimit != 3 || back.RetryBaseSeconds != 60 || back.RetryMaxSeconds != 1800 {
		t.Errorf("without a retry strategy: %+v; want Kueue's 3, 60 and 1800", back)
	}
	for _, bad := range []ProvisioningRequestConfigSpec{
		{Name: "x", ProvisioningClass: "Not_A_Name"},
		{Name: "x", ProvisioningClass: "c", PodSetMergePolicy: "Whatever"},
		{Name: "x", ProvisioningClass: "c", NodeSelector: map[string]string{"a b": "d"}},
		{Name: "x", ProvisioningClass: "c", RetryLimit: -1},
	} {
		if _, err := bad.Build(); err == nil {
			t.Errorf("%+v built", bad)
		}
	}
	check := AdmissionCheckSpec{Name: "capacity", ProvisioningConfig: "dws"}
	obj, err = check.Build()
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedString(obj.Object, "spec", "controllerName"); c != ProvisioningController {
		t.Errorf("controllerName %q", c)
	}
	if back, err := ReadAdmissionCheck(obj); err != nil || back != check {
		t.Errorf("read back %+v (%v)", back, err)
	}
	for _, bad := range []AdmissionCheckSpec{{Name: "both", Config: "fleet", ProvisioningConfig: "dws"}, {Name: "neither"}} {
		if _, err := bad.Build(); err == nil {
			t.Errorf("%+v built", bad)
		}
	}
}
