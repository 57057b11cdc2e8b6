package jobs

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A node's spec.taints is an atomic list for server-side apply: a field manager applying one
// taint would own, and could remove, all of them. So a taint is managed by read-modify-write:
// the patch below replaces the list only if the node is still at the resourceVersion it was
// read at, and a conflict is retried on a fresh read.

// TaintPatch is a JSON patch that sets a node's taints, guarded by its resourceVersion.
func TaintPatch(resourceVersion string, taints []corev1.Taint) []byte {
	if taints == nil {
		taints = []corev1.Taint{}
	}
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": resourceVersion},
		{"op": "add", "path": "/spec/taints", "value": taints},
	})
	return patch
}

// FindTaint returns the taint with key and effect (Kubernetes' identity for a taint).
func FindTaint(taints []corev1.Taint, key string, effect corev1.TaintEffect) (corev1.Taint, bool) {
	for _, t := range taints {
		if t.Key == key && t.Effect == effect {
			return t, true
		}
	}
	return corev1.Taint{}, false
}

// WithTaint adds t to taints. A taint of the same key and effect already there is somebody
// else's (an administrator's, another configuration's), whatever its value: it is an error, and
// nothing is changed. ours says that a taint equal to t is this create's own earlier attempt,
// whose answer was lost: then the taints are returned as they are.
func WithTaint(taints []corev1.Taint, t corev1.Taint, ours bool) ([]corev1.Taint, error) {
	if existing, ok := FindTaint(taints, t.Key, t.Effect); ok {
		if ours && existing.Value == t.Value {
			return taints, nil
		}
		return nil, fmt.Errorf("the node already has the taint %s, which Terraform did not add: import it to manage it "+
			"(terraform import <address> NODE/%s:%s), or remove it first", existing.ToString(), t.Key, t.Effect)
	}
	return append(append([]corev1.Taint{}, taints...), t), nil
}

// WithoutTaint removes the taint of key and effect, leaving every other one as it is.
func WithoutTaint(taints []corev1.Taint, key string, effect corev1.TaintEffect) []corev1.Taint {
	out := []corev1.Taint{}
	for _, t := range taints {
		if t.Key != key || t.Effect != effect {
			out = append(out, t)
		}
	}
	return out
}

// ParseTaint reads a taint as `kubectl taint` writes it (and corev1.Taint's ToString):
// KEY=VALUE:EFFECT or KEY:EFFECT, with the API server's rules for keys, values and effects.
func ParseTaint(s string) (corev1.Taint, error) {
	rest, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("taint %q has no effect: write KEY=VALUE:EFFECT or KEY:EFFECT", s)
	}
	key, value, _ := strings.Cut(rest, "=")
	t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, fmt.Errorf("taint %q: key %q is invalid: %s", s, key, strings.Join(errs, "; "))
	}
	if value != "" {
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return t, fmt.Errorf("taint %q: value %q is invalid: %s", s, value, strings.Join(errs, "; "))
		}
	}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return t, fmt.Errorf("taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	return t, nil
}
