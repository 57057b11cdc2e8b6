package kueue

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// MultiKueue: a manager cluster's Kueue dispatches the workloads of a ClusterQueue to worker
// clusters. Its objects in Kueue v0.19.2's API (apis/kueue/v1beta2/multikueue_types.go,
// admissioncheck_types.go): a MultiKueueCluster per worker cluster, naming the Secret of Kueue's
// namespace that holds its kubeconfig; a MultiKueueConfig listing the clusters; an AdmissionCheck
// of MultiKueue's controller whose parameters name that config; a ClusterQueue that lists the
// check (ClusterQueueSpec.AdmissionChecks).

// The APIs of MultiKueue's objects (all cluster-scoped).
var (
	MultiKueueClusterGVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "multikueueclusters"}
	MultiKueueConfigGVR  = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "multikueueconfigs"}
	AdmissionCheckGVR    = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "admissionchecks"}
)

const (
	// MultiKueueController is the controller name of MultiKueue's admission checks.
	MultiKueueController = "kueue.x-k8s.io/multikueue"
	// KubeconfigSecretKey is the key of a worker cluster's Secret that holds its kubeconfig.
	KubeconfigSecretKey = "kubeconfig"
	// maxMultiKueueClusters bounds a MultiKueueConfig's clusters in Kueue v0.19.2's CRD.
	maxMultiKueueClusters = 20
	// maxLocation bounds a MultiKueueCluster's kubeconfig location and a config's cluster names.
	maxLocation = 256
)

// MultiKueueClusterSpec is a worker cluster: its name, and the Secret (in Kueue's namespace) whose
// key "kubeconfig" holds the kubeconfig Kueue reaches it with.
type MultiKueueClusterSpec struct {
	Name, KubeconfigSecret string
}

// Check applies Kueue v0.19.2's CRD rules: a Secret name of 1 to 256 characters, and a Secret's
// name is a DNS subdomain.
func (s MultiKueueClusterSpec) Check() error {
	if errs := validation.IsDNS1123Subdomain(s.KubeconfigSecret); len(errs) > 0 {
		return fmt.Errorf("kubeconfig Secret %q is not a Secret's name: %s", s.KubeconfigSecret, strings.Join(errs, "; "))
	}
	return nil
}

// Build returns the MultiKueueCluster.
func (s MultiKueueClusterSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("MultiKueueCluster", s.Name, "")
	obj.Object["spec"] = map[string]any{"clusterSource": map[string]any{"kubeConfig": map[string]any{
		"locationType": "Secret", "location": s.KubeconfigSecret}}}
	return obj, nil
}

// ReadMultiKueueCluster reads a MultiKueueCluster back. A cluster whose kubeconfig is a file on
// Kueue's disk (locationType Path) or a ClusterProfile is read with its location, and says so in
// err: this spec names Secrets only.
func ReadMultiKueueCluster(obj *unstructured.Unstructured) (MultiKueueClusterSpec, error) {
	s := MultiKueueClusterSpec{Name: obj.GetName()}
	source, _, _ := unstructured.NestedMap(obj.Object, "spec", "clusterSource")
	kc, _ := source["kubeConfig"].(map[string]any)
	if kc == nil {
		return s, fmt.Errorf("MultiKueueCluster %s takes its cluster from a ClusterProfile, not a kubeconfig Secret", s.Name)
	}
	s.KubeconfigSecret = str(kc, "location")
	if t := str(kc, "locationType"); t != "" && t != "Secret" {
		return s, fmt.Errorf("MultiKueueCluster %s reads its kubeconfig from %s %q, not from a Secret", s.Name, t, s.KubeconfigSecret)
	}
	return s, nil
}

// MultiKueueConfigSpec lists the worker clusters of a MultiKueue admission check.
type MultiKueueConfigSpec struct {
	Name     string
	Clusters []string
}

// Check applies Kueue v0.19.2's CRD rules: 1 to 20 clusters, unique, each named in 1 to 256
// characters.
func (s MultiKueueConfigSpec) Check() error {
	if len(s.Clusters) == 0 || len(s.Clusters) > maxMultiKueueClusters {
		return fmt.Errorf("%d clusters; Kueue takes 1 to %d", len(s.Clusters), maxMultiKueueClusters)
	}
	for i, c := range s.Clusters {
		if c == "" || len(c) > maxLocation {
			return fmt.Errorf("cluster %d, %q: Kueue takes a name of 1 to %d characters", i, c, maxLocation)
		}
		if slices.Index(s.Clusters, c) != i {
			return fmt.Errorf("cluster %q is listed twice; Kueue wants the clusters unique", c)
		}
	}
	return nil
}

// Build returns the MultiKueueConfig.
func (s MultiKueueConfigSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("MultiKueueConfig", s.Name, "")
	clusters := make([]any, len(s.Clusters))
	for i, c := range s.Clusters {
		clusters[i] = c
	}
	obj.Object["spec"] = map[string]any{"clusters": clusters}
	return obj, nil
}

// ReadMultiKueueConfig reads a MultiKueueConfig back.
func ReadMultiKueueConfig(obj *unstructured.Unstructured) MultiKueueConfigSpec {
	s := MultiKueueConfigSpec{Name: obj.GetName()}
	s.Clusters, _, _ = unstructured.NestedStringSlice(obj.Object, "spec", "clusters")
	return s
}

// AdmissionCheckSpec is an admission check of MultiKueue or of Kueue's provisioning controller:
// Config names the MultiKueueConfig whose clusters the workloads of the ClusterQueues that list it
// are dispatched to; ProvisioningConfig, the ProvisioningRequestConfig with which capacity is
// asked for each of them before it is admitted. One of the two is set.
type AdmissionCheckSpec struct {
	Name, Config, ProvisioningConfig string
}

// Check applies Kueue v0.19.2's CRD rules to the parameters: one config is named, and its name
// is a DNS label (AdmissionCheckParametersReference).
func (s AdmissionCheckSpec) Check() error {
	if (s.Config == "") == (s.ProvisioningConfig == "") {
		return fmt.Errorf("AdmissionCheck %s: name either a MultiKueueConfig or a ProvisioningRequestConfig", s.Name)
	}
	kind, name := "MultiKueueConfig", s.Config
	if s.ProvisioningConfig != "" {
		kind, name = "ProvisioningRequestConfig", s.ProvisioningConfig
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%s name %q: %s", kind, name, strings.Join(errs, "; "))
	}
	return nil
}

// Build returns the AdmissionCheck.
func (s AdmissionCheckSpec) Build() (*unstructured.Unstructured, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	obj := newObject("AdmissionCheck", s.Name, "")
	controller, kind, name := MultiKueueController, "MultiKueueConfig", s.Config
	if s.ProvisioningConfig != "" {
		controller, kind, name = ProvisioningController, "ProvisioningRequestConfig", s.ProvisioningConfig
	}
	obj.Object["spec"] = map[string]any{"controllerName": controller,
		"parameters": map[string]any{"apiGroup": Group, "kind": kind, "name": name}}
	return obj, nil
}

// ReadAdmissionCheck reads an AdmissionCheck back; err says when it is neither MultiKueue's nor
// Kueue's provisioning controller's, or its parameters are not that controller's kind.
func ReadAdmissionCheck(obj *unstructured.Unstructured) (AdmissionCheckSpec, error) {
	s := AdmissionCheckSpec{Name: obj.GetName()}
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	params, _ := spec["parameters"].(map[string]any)
	kind := "MultiKueueConfig"
	switch c := str(spec, "controllerName"); c {
	case MultiKueueController:
		s.Config = str(params, "name")
	case ProvisioningController:
		kind, s.ProvisioningConfig = "ProvisioningRequestConfig", str(params, "name")
	default:
		return s, fmt.Errorf("AdmissionCheck %s is controlled by %q, neither by MultiKueue (%s) nor by Kueue's provisioning (%s)",
			s.Name, c, MultiKueueController, ProvisioningController)
	}
	if k := str(params, "kind"); params != nil && k != kind {
		return s, fmt.Errorf("AdmissionCheck %s's parameters are a %s, not a %s", s.Name, k, kind)
	}
	return s, nil
}

// Active is an object's Active condition, as MultiKueue's controllers set it on a
// MultiKueueCluster (connected or not, and why: BadKubeConfig, InsecureKubeConfig,
// ClientConnectionFailed) and on an AdmissionCheck (its config and clusters usable or not:
// BadConfig, NoUsableClusters, SomeActiveClusters). Known is false until a controller has set it.
type Active struct {
	Known, Active   bool
	Reason, Message string
}

// ReadActive reads the object's Active condition.
func ReadActive(obj *unstructured.Unstructured) Active {
	c := condition(obj, "Active")
	if c == nil {
		return Active{}
	}
	return Active{Known: true, Active: c["status"] == "True", Reason: str(c, "reason"), Message: str(c, "message")}
}
