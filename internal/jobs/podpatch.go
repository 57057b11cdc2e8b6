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
	fields, _ := pruned(v) // the fields it sets, without its directives
	if m, ok := fields.(map[string]any); ok && m["metadata"] != nil {
		// A refresh leaves a template's metadata to the labels and annotations attributes
		// (Kueue writes there too), so a patch of it would never read back.
		return nil, errors.New("metadata: a pod patch changes the pods' spec; set their labels and annotations with the labels and annotations attributes")
	}
	data, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	var t corev1.PodTemplateSpec
	strict, err := sigsjson.UnmarshalStrict(data, &t)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		return nil, errors.Join(strict...)
	}
	return raw, nil
}

// PodPatchError is why a role's pod patch (Attribute pod_patch) or options (roles) cannot be
// applied.
type PodPatchError struct {
	Attribute, Role string
	Err             error
}

func (e *PodPatchError) Error() string { return fmt.Sprintf("%s[%q]: %v", e.Attribute, e.Role, e.Err) }
func (e *PodPatchError) Unwrap() error { return e.Err }

// applyPodPatches applies each role's patch to the job's pod template of that role
// (k.templates; see patchTemplates).
func applyPodPatches(k *Kind, obj *unstructured.Unstructured, patches map[string]string) error {
	if len(patches) == 0 {
		return nil
	}
	if k.templates == nil {
		return &PodPatchError{"pod_patch", slices.Sorted(maps.Keys(patches))[0], fmt.Errorf("a %s's pods cannot be patched", k.Object)}
	}
	return patchTemplates(k.templates(obj), patches)
}

// patchTemplates applies each role's patch to its template, in place, and checks that the
// patched template keeps what the operator and this provider rely on.
func patchTemplates(templates map[string]map[string]any, patches map[string]string) error {
	return eachRole(templates, "pod_patch", patches, func(_ string, template map[string]any, p string) error {
		patch, err := ParsePodPatch(p)
		if err != nil {
			return err
		}
		patched, err := patchTemplate(template, patch)
		if err != nil {
			return err
		}
		if err := checkPatched(template, patched); err != nil {
			return err
		}
		clear(template)
		maps.Copy(template, patched)
		return nil
	})
}

// eachRole calls apply with the template of each role of settings (by role), in the roles'
// order; which role the job lacks, or why apply refused a role's setting, is a PodPatchError of
// attribute.
func eachRole[S any](templates map[string]map[string]any, attribute string, settings map[string]S, apply func(role string, template map[string]any, s S) error) error {
	for _, role := range slices.Sorted(maps.Keys(settings)) {
		template, ok := templates[role]
		if !ok {
			return &PodPatchError{attribute, role, fmt.Errorf("this job has no role %q; its roles are %s", role, strings.Join(slices.Sorted(maps.Keys(templates)), ", "))}
		}
		if err := apply(role, template, settings[role]); err != nil {
			return &PodPatchError{attribute, role, err}
		}
	}
	return nil
}

// withPatches is a kind's Build's end: the job with its roles' options and then its pod
// patches applied.
func withPatches(k *Kind, job *unstructured.Unstructured, err error, o PodOptions) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	if err == nil {
		err = applyPerRole(k, job, o)
	}
	return job, nil, err
}

// applyPerRole applies to a job object what each role's template says for itself, in order:
// the spread of its own pods, its role's options, its topology request, then its pod patch.
func applyPerRole(k *Kind, job *unstructured.Unstructured, o PodOptions) error {
	if len(o.Spread) > 0 {
		if k.templates == nil {
			return fmt.Errorf("a %s cannot spread its pods: its templates are its runtime's (set topology_spread on the runtime)", k.Object)
		}
		if err := applySpread(job, k.templates(job), o.Spread, k.roleSelector); err != nil {
			return err
		}
	}
	if err := applyRoleOptions(k, job, o.Roles, o.NoCPULimit); err != nil {
		return err
	}
	if err := applyTopology(k, job, o.RequiredTopology, o.PreferredTopology); err != nil {
		return err
	}
	return applyPodPatches(k, job, o.Patches)
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

// editTemplate changes a pod template held as the job object's own maps, in place, through
// its typed form.
func editTemplate(m map[string]any, edit func(*corev1.PodTemplateSpec) error) error {
	var t corev1.PodTemplateSpec
	if err := fromMap(m, &t); err != nil {
		return err
	}
	if err := edit(&t); err != nil {
		return err
	}
	out, err := toMap(t)
	if err != nil {
		return err
	}
	clear(m)
	maps.Copy(m, out)
	return nil
}

func fromMap(m map[string]any, out any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
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
