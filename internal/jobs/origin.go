package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RequestHashAnnotation records, on every object this provider creates, a hash of the object
// as it was asked for; CreateIDAnnotation, a random ID of the one create call that sent it.
// When a create finds an object of the same name, the create ID tells this very call's own
// object (an attempt whose answer was lost) apart from everything else, and the hash tells an
// earlier apply's leftover from the same configuration (an apply interrupted before Terraform
// saved its state), which may be adopted only if it is young and has not started (see
// Adoptable); any other object is never taken over.
const (
	RequestHashAnnotation = "training.kubetrain.io/request-hash"
	CreateIDAnnotation    = "training.kubetrain.io/create-id"
	// SensitiveEnvAnnotation lists, comma-separated and sorted, the names (never the values) of
	// the job's environment variables that were given as sensitive.
	SensitiveEnvAnnotation = "training.kubetrain.io/sensitive-env"
)

// jobAnnotations are a job object's annotations: the user's, the names of its sensitive
// variables and its checkpoint.
func jobAnnotations(o PodOptions) map[string]string {
	annotations := copyMap(o.Annotations)
	if c := checkpointAnnotation(o.Checkpoint); c != "" {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[CheckpointAnnotation] = c
	}
	if o.WriteOnlyEnv != nil {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[WriteOnlyEnvAnnotation] = strconv.FormatInt(o.WriteOnlyEnv.Version, 10)
	}
	if len(o.SensitiveEnv) > 0 {
		if annotations == nil {
			annotations = map[string]string{}
		}
		names := slices.Clone(o.SensitiveEnv)
		slices.Sort(names)
		annotations[SensitiveEnvAnnotation] = strings.Join(names, ",")
	}
	return annotations
}

// readSensitiveEnv sets which of the pods' inline variables are sensitive, as the job object
// records them (jobAnnotations). A job this provider did not make records none, and any of its
// inline values may be a credential someone wrote there: all of them are taken as sensitive, so
// that an import never shows one in clear. Call it once o.Env holds the job's own variables.
func readSensitiveEnv(o *PodOptions, labels, annotations map[string]string) {
	o.SensitiveEnv = nil
	switch {
	case labels[ManagedByLabel] != ManagedByValue:
		if len(o.Env) > 0 {
			o.SensitiveEnv = slices.Sorted(maps.Keys(o.Env))
		}
	case annotations[SensitiveEnvAnnotation] != "":
		o.SensitiveEnv = strings.Split(annotations[SensitiveEnvAnnotation], ",")
	}
}

// StampRequest labels obj as this provider's and records its request hash and the create call's
// ID. The hash leaves the ID out, so the same configuration hashes alike in every apply; and
// stamping a stamped object gives the same hash.
func StampRequest(obj *unstructured.Unstructured, createID string) error {
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = ManagedByValue
	obj.SetLabels(labels)
	annotations := maps.Clone(obj.GetAnnotations())
	delete(annotations, RequestHashAnnotation)
	delete(annotations, CreateIDAnnotation)
	obj.SetAnnotations(annotations)
	// encoding/json writes map keys sorted, so equal objects hash alike.
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(raw)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[RequestHashAnnotation] = hex.EncodeToString(sum[:16])
	annotations[CreateIDAnnotation] = createID
	obj.SetAnnotations(annotations)
	return nil
}

// SameCreate says whether existing is the object this very create call sent (stamped on desired).
func SameCreate(existing, desired *unstructured.Unstructured) bool {
	id := desired.GetAnnotations()[CreateIDAnnotation]
	return id != "" && IsManaged(existing) && existing.GetAnnotations()[CreateIDAnnotation] == id
}

// SameRequest says whether existing was created by this provider from exactly the request
// stamped on desired (in this apply or an earlier one).
func SameRequest(existing, desired *unstructured.Unstructured) bool {
	hash := desired.GetAnnotations()[RequestHashAnnotation]
	return hash != "" && IsManaged(existing) && existing.GetAnnotations()[RequestHashAnnotation] == hash
}

// userAnnotations are an object's annotations without the ones this provider adds; nil if none.
func userAnnotations(annotations map[string]string) map[string]string {
	user := maps.Clone(annotations)
	delete(user, RequestHashAnnotation)
	delete(user, CreateIDAnnotation)
	delete(user, ElasticInputsAnnotation)
	delete(user, SensitiveEnvAnnotation)
	delete(user, WriteOnlyEnvAnnotation)
	delete(user, CheckpointAnnotation)
	delete(user, PodMetadataAnnotation)
	if len(user) == 0 {
		return nil
	}
	return user
}

// systemKeyPrefixes are the label and annotation prefixes that tools and controllers, not
// users, write on job objects: kubectl's last-applied configuration, Kueue's, the Kubeflow
// operators' and the core controllers'.
var systemKeyPrefixes = []string{
	"kubectl.kubernetes.io/", "kueue.x-k8s.io/", "training.kubeflow.org/", "scheduling.x-k8s.io/",
	"deployment.kubernetes.io/", "batch.kubernetes.io/", "kubernetes.io/", "k8s.io/",
}

// SystemKey says whether a label or annotation key is one that a tool or controller writes,
// which an import does not take for the user's.
func SystemKey(key string) bool {
	for _, p := range systemKeyPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
