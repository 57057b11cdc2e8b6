package jobs

import (
	"encoding/json"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Unexpressed lists what a job object holds in its pods that the object rebuilt from its
// resource's read does not: fields of a role's pod spec (an init container, a volume, a
// security context) or of its containers that the resource has no attribute for. Import keeps
// them on the running job, but a replacement would drop them, so a migration says so. Each entry
// is ROLE: FIELD.
func (k *Kind) Unexpressed(live, rebuilt *unstructured.Unstructured) []string {
	rebuiltRoles, err := k.Roles(rebuilt, nil)
	if err != nil {
		return nil
	}
	byRole := map[string]RolePods{}
	for _, r := range rebuiltRoles {
		byRole[r.Role] = r
	}
	liveRoles, err := k.Roles(live, nil)
	if err != nil {
		return nil
	}
	var out []string
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
// pytorchjob-port), which no user wrote.
func withoutOperatorDefaults(spec *corev1.PodSpec) {
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
