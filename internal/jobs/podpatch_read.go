package jobs

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// ReadPodPatches are the pod patches that make the job the resource's attributes build (bare,
// built without patches) into the live one, by role: what a live pod template holds beyond
// the attributes, as JSON. A role's prior patch (the state's, in the configuration's words) is
// kept when it makes the same difference. What the bare job sets and the live one lacks is a
// default, not a difference (as Unexpressed holds). A role whose difference no patch may make
// (checkPatched) has none: its fields stay unexpressed.
func (k *Kind) ReadPodPatches(live, bare *unstructured.Unstructured, prior map[string]string) map[string]string {
	if k.templates == nil {
		return nil
	}
	return readPodPatches(k.templates(live), k.templates(bare), prior)
}

// ReadRuntimePodPatches are a runtime's pod patches, by replicated job, as ReadPodPatches reads a
// job's.
func ReadRuntimePodPatches(live, bare *unstructured.Unstructured, prior map[string]string) map[string]string {
	return readPodPatches(runtimeTemplates(live), runtimeTemplates(bare), prior)
}

func readPodPatches(liveTemplates, bareTemplates map[string]map[string]any, prior map[string]string) map[string]string {
	out := map[string]string{}
	for role, l := range liveTemplates {
		b, ok := bareTemplates[role]
		if !ok {
			continue
		}
		b = withoutOperatorDefaultsMap(b)
		want := difference(b, withoutOperatorDefaultsMap(l))
		if want == "" {
			continue
		}
		if p, ok := prior[role]; ok {
			if patch, err := ParsePodPatch(p); err == nil {
				if patched, err := patchTemplate(b, patch); err == nil && difference(b, normalTemplate(patched)) == want {
					out[role] = p
					continue
				}
			}
		}
		if applied, err := patchTemplate(b, []byte(want)); err == nil && checkPatched(b, applied) == nil {
			out[role] = want
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// difference is the strategic merge patch from template a to b, without deletions and
// directives (what a lacks or holds otherwise) and without the metadata, as canonical JSON; ""
// when there is none.
func difference(a, b map[string]any) string {
	aj, err1 := json.Marshal(a)
	bj, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return ""
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(aj, bj, corev1.PodTemplateSpec{})
	if err != nil {
		return ""
	}
	var v map[string]any
	if json.Unmarshal(patch, &v) != nil {
		return ""
	}
	// A template's labels and annotations are the labels and annotations attributes': only
	// their keys are Terraform's, and Kueue, Arena and others write their own.
	delete(v, "metadata")
	var original any
	_ = json.Unmarshal(aj, &original)
	p, ok := pruned(v)
	if ok {
		p, ok = pruned(withoutRemovals(p, original))
	}
	if v, _ = p.(map[string]any); !ok || len(v) == 0 {
		return ""
	}
	out, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(out)
}

// withoutRemovals drops from a patch of original the lists of objects it sets whole (lists
// without merge keys, such as tolerations) that only leave out or reorder elements of the
// original's: what the original sets and the other lacks is a default, not a difference. Lists
// merged by name are followed element by element.
func withoutRemovals(patch, original any) any {
	switch p := patch.(type) {
	case map[string]any:
		o, _ := original.(map[string]any)
		for k, x := range p {
			p[k] = withoutRemovals(x, o[k])
		}
		return p
	case []any:
		o, _ := original.([]any)
		byName := map[string]any{}
		for _, x := range o {
			if m, ok := x.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					byName[name] = m
				}
			}
		}
		// A list of objects without names (tolerations) is a set: one that holds only elements
		// of the original's, in any order, makes no difference. A list of strings (a command)
		// is ordered, and set whole.
		subset := len(p) > 0
		for i, x := range p {
			m, ok := x.(map[string]any)
			if !ok {
				subset = false
				continue
			}
			if name, ok := m["name"].(string); ok && len(byName) > 0 {
				p[i] = withoutRemovals(x, byName[name])
				subset = false
				continue
			}
			if !slices.ContainsFunc(o, func(y any) bool { return reflect.DeepEqual(x, y) }) {
				subset = false
			}
		}
		if subset || len(p) == 0 && len(o) > 0 {
			return nil
		}
		return p
	}
	return patch
}

// pruned is a two-way patch without its directives and deletions, and without the maps and
// lists they leave empty; a map or list that was empty in the patch (the {} of an emptyDir)
// stays. ok is false when nothing is left.
func pruned(v any) (out any, ok bool) {
	switch v := v.(type) {
	case nil:
		return nil, false
	case map[string]any:
		if len(v) == 0 {
			return v, true
		}
		m := map[string]any{}
		for k, x := range v {
			if strings.HasPrefix(k, "$") {
				continue
			}
			if y, ok := pruned(x); ok {
				m[k] = y
			}
		}
		return m, len(m) > 0
	case []any:
		if len(v) == 0 {
			return v, true
		}
		var l []any
		for _, x := range v {
			y, ok := pruned(x)
			if !ok {
				continue
			}
			// An element left with its merge key alone (its other fields were deletions)
			// makes no difference.
			if m, isMap := y.(map[string]any); isMap && len(m) == 1 && m["name"] != nil {
				if original, _ := x.(map[string]any); len(original) > 1 {
					continue
				}
			}
			l = append(l, y)
		}
		return l, len(l) > 0
	}
	return v, true
}

// normalTemplate is a template as JSON maps in the form the typed pod template marshals to,
// without the empty resources it gives every container, so that two templates that mean the
// same compare equal.
func normalTemplate(m map[string]any) map[string]any {
	var t corev1.PodTemplateSpec
	if fromMap(m, &t) != nil {
		return m
	}
	return typedTemplate(t, m)
}

// withoutOperatorDefaultsMap is withoutOperatorDefaults on a template as JSON maps, in
// normalTemplate's form.
func withoutOperatorDefaultsMap(m map[string]any) map[string]any {
	var t corev1.PodTemplateSpec
	if fromMap(m, &t) != nil {
		return m
	}
	withoutOperatorDefaults(&t.Spec)
	return typedTemplate(t, m)
}

// typedTemplate is t as JSON maps (or fallback), without its containers' empty resources.
func typedTemplate(t corev1.PodTemplateSpec, fallback map[string]any) map[string]any {
	out, err := toMap(t)
	if err != nil {
		return fallback
	}
	spec, _ := out["spec"].(map[string]any)
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := spec[field].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				if r, ok := m["resources"].(map[string]any); ok && len(r) == 0 {
					delete(m, "resources")
				}
			}
		}
	}
	return out
}
