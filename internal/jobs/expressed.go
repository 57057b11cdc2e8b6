package jobs

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Unexpressed lists what a job object holds that the object rebuilt from its resource's read
// does not: fields of a role's pod spec (an init container, a volume, a security context) or of
// its containers that the resource has no attribute for, as ROLE: FIELD, and fields of the job's
// spec outside its pod templates (a scheduling policy, an operator option), as spec.PATH.
// Import keeps them on the running job, but a replacement would drop them, so a migration says
// so. What the rebuild sets and the live object lacks is a default, not a gap.
func (k *Kind) Unexpressed(live, rebuilt *unstructured.Unstructured) []string {
	out := k.specGaps(live, rebuilt)
	rebuiltRoles, err := k.Roles(rebuilt, nil)
	if err != nil {
		sort.Strings(out)
		return out
	}
	byRole := map[string]RolePods{}
	for _, r := range rebuiltRoles {
		byRole[r.Role] = r
	}
	liveRoles, err := k.Roles(live, nil)
	if err != nil {
		sort.Strings(out)
		return out
	}
	for _, r := range liveRoles {
		withoutOperatorDefaults(&r.Template.Spec)
		want, ok := byRole[r.Role]
		if !ok {
			out = append(out, r.Role+": the whole role")
			continue
		}
		// What the rebuild sets and the live object lacks is a default, not a gap.
		for _, field := range addedFields(want.Template.Spec, r.Template.Spec) {
			if field == "containers" && len(want.Template.Spec.Containers) == len(r.Template.Spec.Containers) {
				for i, c := range r.Template.Spec.Containers {
					for _, f := range addedFields(want.Template.Spec.Containers[i], c) {
						out = append(out, r.Role+": containers["+c.Name+"]."+f)
					}
				}
				continue
			}
			out = append(out, r.Role+": "+field)
		}
	}
	sort.Strings(out)
	return out
}

// specGaps are the paths of the live object's spec, outside the pod templates of its roles
// (compared role by role), that the rebuilt object lacks or holds otherwise, and that do not
// hold their default.
func (k *Kind) specGaps(live, rebuilt *unstructured.Unstructured) []string {
	defaults := k.specDefaults
	spec := func(obj *unstructured.Unstructured) any {
		s, _, _ := unstructured.NestedMap(k.withoutPodTemplates(obj).Object, "spec")
		return normalJSON(withoutKueuePatch(s))
	}
	liveSpec := spec(live)
	var out []string
	for _, path := range diffPaths("spec", spec(rebuilt), liveSpec) {
		if def, ok := defaults[path]; !ok || !reflect.DeepEqual(normalJSON(def), valueAt(liveSpec, strings.TrimPrefix(path, "spec."))) {
			out = append(out, path)
		}
	}
	return out
}

// normalJSON is v as encoding/json reads it back: one form of numbers on both sides.
func normalJSON(v any) any {
	var out any
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// valueAt is the value at a dotted path of maps, or nil (valueAtPath).
func valueAt(v any, path string) any { return valueAtPath(v, strings.Split(path, ".")) }

// withoutPodTemplates is a copy of a job object whose roles' pod templates (k.templates) are
// empty: they are compared role by role.
func (k *Kind) withoutPodTemplates(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	k.DropPodTemplates(c)
	return c
}

// DropPodTemplates empties the pod templates of the roles of obj, a job object of this kind, in
// place: what a wait keeps of a job it watches, since it reads the job's metadata and status
// and its pods, never the templates the pods were made from.
func (k *Kind) DropPodTemplates(obj *unstructured.Unstructured) {
	if k.templates != nil {
		for _, t := range k.templates(obj) {
			clear(t)
		}
	}
}

// withoutKueuePatch is a job spec without Kueue's runtime patch on a TrainJob (its admission's
// placement), which is Kueue's, not the owner's.
func withoutKueuePatch(spec map[string]any) map[string]any {
	patches, ok := spec["runtimePatches"].([]any)
	if !ok {
		return spec
	}
	var own []any
	for _, p := range patches {
		if m, _ := p.(map[string]any); m["manager"] != kueueRuntimePatchManager {
			own = append(own, p)
		}
	}
	spec["runtimePatches"] = own
	if len(own) == 0 {
		delete(spec, "runtimePatches")
	}
	return spec
}

// diffPaths are the paths under path where got holds a value that want lacks or holds otherwise.
func diffPaths(path string, want, got any) []string {
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok && want != nil {
			return []string{path}
		}
		var out []string
		for key, value := range g { // each field the rebuild lacks, by its own path
			out = append(out, diffPaths(path+"."+key, w[key], value)...)
		}
		return out
	case []any:
		w, ok := want.([]any)
		if !ok || len(w) != len(g) {
			return []string{path}
		}
		var out []string
		for i := range g {
			out = append(out, diffPaths(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	case nil:
		return nil
	}
	if !reflect.DeepEqual(want, got) {
		return []string{path}
	}
	return nil
}

// addedFields are the top-level fields after has and before lacks or holds otherwise.
func addedFields(before, after any) []string {
	b, err1 := json.Marshal(before)
	a, err2 := json.Marshal(after)
	if err1 != nil || err2 != nil {
		return nil
	}
	patch, err := jsonpatch.CreateMergePatch(b, a)
	if err != nil {
		return nil
	}
	var added map[string]any
	if json.Unmarshal(patch, &added) != nil {
		return nil
	}
	var out []string
	for field, v := range added {
		if v != nil {
			out = append(out, field)
		}
	}
	return out
}

// withoutOperatorDefaults drops from a live pod spec what the operators write into a job
// themselves: training-operator's default port on the framework's container (tfjob-port,
// pytorchjob-port), and Kueue's topology scheduling gate, which no user wrote.
func withoutOperatorDefaults(spec *corev1.PodSpec) {
	// Kueue's Topology Aware Scheduling gates the pods of a job it admits on a topology flavor
	// (its job templates get the gate; its ungater lifts it from each pod once placed).
	spec.SchedulingGates = slices.DeleteFunc(spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == KueueTopologyGate })
	if len(spec.SchedulingGates) == 0 {
		spec.SchedulingGates = nil
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		ports := c.Ports[:0]
		for _, p := range c.Ports {
			if !strings.HasSuffix(p.Name, "job-port") {
				ports = append(ports, p)
			}
		}
		c.Ports = ports
		if len(c.Ports) == 0 {
			c.Ports = nil
		}
	}
}
