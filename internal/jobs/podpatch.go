package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// A pod patch is a strategic merge patch of one role's pod template (metadata and spec), the
// escape hatch for what the resources' attributes do not say: applied after them, as
// `kubectl patch --type=strategic` would, so that lists keyed by name (containers, volumes,
// env) merge by name.

// ParsePodPatch reads a pod patch, YAML or JSON, strictly as a pod template: an unknown field or
// a value of the wrong type is an error naming its path. Strategic merge directives ($patch,
// $retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...) are allowed. It returns the
// patch as JSON.
func ParsePodPatch(s string) ([]byte, error) {
	raw, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("a pod patch is a pod template's fields (metadata, spec), not %s", strings.TrimSpace(s))
	}
	fields, err := json.Marshal(withoutDirectives(v))
	if err != nil {
		return nil, err
	}
	var t corev1.PodTemplateSpec
	strict, err := sigsjson.UnmarshalStrict(fields, &t)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		return nil, errors.Join(strict...)
	}
	return raw, nil
}

// withoutDirectives is a patch without its strategic merge directives and deletions (null), the
// fields it sets alone.
func withoutDirectives(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if strings.HasPrefix(k, "$") || x == nil {
				continue
			}
			out[k] = withoutDirectives(x)
		}
		return out
	case []any:
		out := make([]any, 0, len(v))
		for _, x := range v {
			out = append(out, withoutDirectives(x))
		}
		return out
	}
	return v
}

// PodPatchError is why a role's pod patch (Attribute pod_patch) or options (roles) cannot be
// applied.
type PodPatchError struct {
	Attribute, Role string
	Err             error
}

func (e *PodPatchError) Error() string { return fmt.Sprintf("%s[%q]: %v", e.Attribute, e.Role, e.Err) }
func (e *PodPatchError) Unwrap() error { return e.Err }

// applyPodPatches applies each role's patch to the job's pod template of that role (k.templates)
// and checks that the patched template keeps what the operator and this provider rely on.
func applyPodPatches(k *Kind, obj *unstructured.Unstructured, patches map[string]string) error {
	if len(patches) == 0 {
		return nil
	}
	if k.templates == nil {
		return &PodPatchError{"pod_patch", slices.Sorted(maps.Keys(patches))[0], fmt.Errorf("a %s's pods cannot be patched", k.Object)}
	}
	templates := k.templates(obj)
	for _, role := range slices.Sorted(maps.Keys(patches)) {
		template, ok := templates[role]
		if !ok {
			return &PodPatchError{"pod_patch", role, fmt.Errorf("this job has no role %q; its roles are %s", role, strings.Join(slices.Sorted(maps.Keys(templates)), ", "))}
		}
		patch, err := ParsePodPatch(patches[role])
		if err != nil {
			return &PodPatchError{"pod_patch", role, err}
		}
		patched, err := patchTemplate(template, patch)
		if err != nil {
			return &PodPatchError{"pod_patch", role, err}
		}
		if err := checkPatched(template, patched); err != nil {
			return &PodPatchError{"pod_patch", role, err}
		}
		clear(template)
		maps.Copy(template, patched)
	}
	return nil
}

// withPatches is a kind's Build's end: the job with its roles' options and then its pod
// patches applied.
func withPatches(k *Kind, job *unstructured.Unstructured, err error, o PodOptions) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	if err == nil {
		err = applyRoleOptions(k, job, o.Roles)
	}
	if err == nil {
		err = applyPodPatches(k, job, o.Patches)
	}
	return job, nil, err
}

// patchTemplate is a pod template (as JSON maps) with a strategic merge patch applied.
func patchTemplate(template map[string]any, patch []byte) (map[string]any, error) {
	original, err := json.Marshal(template)
	if err != nil {
		return nil, err
	}
	out, err := strategicpatch.StrategicMergePatch(original, patch, corev1.PodTemplateSpec{})
	if err != nil {
		return nil, err
	}
	var patched map[string]any
	return patched, json.Unmarshal(out, &patched)
}

// checkPatched refuses a patch that changes what the operator and this provider rely on: the
// main container (the first: its name is the one the operator looks for; its image and command
// are the resource's own attributes), the variables this provider gives it (the rendezvous,
// the GPUs it may see, the ranks' environment) and the pod's restartPolicy (the operator's).
func checkPatched(before, after map[string]any) error {
	var b, a corev1.PodTemplateSpec
	if err := fromMap(before, &b); err != nil {
		return err
	}
	if err := fromMap(after, &a); err != nil {
		return err
	}
	if a.Spec.RestartPolicy != b.Spec.RestartPolicy {
		return fmt.Errorf("it sets restartPolicy, which the operator sets from the job")
	}
	if len(b.Spec.Containers) == 0 {
		return nil
	}
	main := b.Spec.Containers[0]
	if len(a.Spec.Containers) == 0 || a.Spec.Containers[0].Name != main.Name {
		return fmt.Errorf("the first container must stay %q, the container the operator looks for (add containers after it, by their own names)", main.Name)
	}
	got := a.Spec.Containers[0]
	switch {
	case got.Image != main.Image:
		return fmt.Errorf("it changes container %q's image: set image instead", main.Name)
	case !reflect.DeepEqual(got.Command, main.Command) || !reflect.DeepEqual(got.Args, main.Args):
		return fmt.Errorf("it changes container %q's command: set the resource's command instead", main.Name)
	}
	for _, e := range main.Env {
		i := slices.IndexFunc(got.Env, func(g corev1.EnvVar) bool { return g.Name == e.Name })
		if i < 0 || !reflect.DeepEqual(got.Env[i], e) {
			return fmt.Errorf("it changes variable %s of container %q, which this provider sets: set env instead", e.Name, main.Name)
		}
	}
	return nil
}

func fromMap(m map[string]any, out any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

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
	bareTemplates := k.templates(bare)
	out := map[string]string{}
	for role, l := range k.templates(live) {
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
	v, _ = withoutEmpty(withoutRemovals(withoutDirectives(v), original)).(map[string]any)
	if v == nil {
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

// withoutEmpty drops empty maps left by withoutDirectives; nil when nothing is left.
func withoutEmpty(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x = withoutEmpty(x); x == nil {
				delete(v, k)
			} else {
				v[k] = x
			}
		}
		if len(v) == 0 {
			return nil
		}
	case []any:
		// An element left with its merge key alone (a container whose deleted fields were all
		// the difference) makes no difference.
		out := v[:0]
		for _, x := range v {
			if x = withoutEmpty(x); x == nil {
				continue
			}
			if m, ok := x.(map[string]any); ok && len(m) == 1 && m["name"] != nil {
				continue
			}
			out = append(out, x)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// normalTemplate is a template as JSON maps in the form the typed pod template marshals to, so
// that two templates that mean the same compare equal.
func normalTemplate(m map[string]any) map[string]any {
	var t corev1.PodTemplateSpec
	if fromMap(m, &t) != nil {
		return m
	}
	out, err := toMap(t)
	if err != nil {
		return m
	}
	return out
}

// withoutOperatorDefaultsMap is withoutOperatorDefaults on a template as JSON maps.
func withoutOperatorDefaultsMap(m map[string]any) map[string]any {
	var t corev1.PodTemplateSpec
	if fromMap(m, &t) != nil {
		return m
	}
	withoutOperatorDefaults(&t.Spec)
	out, err := toMap(t)
	if err != nil {
		return m
	}
	return out
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// PatchRoles are the roles a kind's pod_patch may name, sorted.
func (k *Kind) PatchRoles() []string {
	out := slices.Clone(k.patchRoles)
	sort.Strings(out)
	return out
}
