package jobs

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RoleOptions are what one role's pods say otherwise than the job's (PodOptions): its main
// container's image, CPU and memory (request and limit), environment (added to the job's), where
// its pods run and their priority. Empty fields are the role's defaults: the job's, or for a
// companion (an elastic job's etcd) its own (PodOptions.companion).
type RoleOptions struct {
	Image, CPU, Memory string
	Env                map[string]string
	NodeSelector       map[string]string
	// Tolerations replace the default ones when not nil.
	Tolerations       []corev1.Toleration
	PriorityClassName string
}

func (r RoleOptions) empty() bool {
	return r.Image == "" && r.CPU == "" && r.Memory == "" && len(r.Env) == 0 && r.NodeSelector == nil && r.Tolerations == nil &&
		r.PriorityClassName == ""
}

// applyRoleOptions applies each role's options to its pod template (k.templates), before the
// pod patches.
func applyRoleOptions(k *Kind, obj *unstructured.Unstructured, roles map[string]RoleOptions, noCPULimit bool) error {
	if len(roles) == 0 {
		return nil
	}
	if k.templates == nil {
		return &PodPatchError{Attribute: "roles", Role: slices.Sorted(maps.Keys(roles))[0], Err: fmt.Errorf("a %s's roles are its runtime's", k.Object)}
	}
	return eachRole(k.templates(obj), "roles", roles, func(role string, m map[string]any, r RoleOptions) error {
		if err := k.saidElsewhere(role, r); err != nil {
			return err
		}
		return editTemplate(m, func(t *corev1.PodTemplateSpec) error { return r.apply(t, noCPULimit) })
	})
}

// apply sets r on t: a CPU as request alone with noCPULimit (the job's cpu_limit), as its
// workers' is.
func (r RoleOptions) apply(t *corev1.PodTemplateSpec, noCPULimit bool) error {
	if r.NodeSelector != nil {
		t.Spec.NodeSelector = r.NodeSelector
	}
	if r.Tolerations != nil {
		t.Spec.Tolerations = r.Tolerations
	}
	if r.PriorityClassName != "" {
		t.Spec.PriorityClassName = r.PriorityClassName
	}
	if len(t.Spec.Containers) == 0 {
		return nil
	}
	c := &t.Spec.Containers[0]
	if r.Image != "" {
		c.Image = r.Image
	}
	for _, q := range []struct {
		name  corev1.ResourceName
		value string
	}{{corev1.ResourceCPU, r.CPU}, {corev1.ResourceMemory, r.Memory}} {
		if q.value == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.value)
		if err != nil {
			return fmt.Errorf("%s %q is not a Kubernetes quantity: %w", q.name, q.value, err)
		}
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		c.Resources.Requests[q.name], c.Resources.Limits[q.name] = v, v
		if q.name == corev1.ResourceCPU && noCPULimit {
			delete(c.Resources.Limits, q.name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Env)) {
		e := corev1.EnvVar{Name: name, Value: r.Env[name]}
		if i := slices.IndexFunc(c.Env, func(x corev1.EnvVar) bool { return x.Name == name }); i >= 0 {
			c.Env[i] = e
		} else {
			c.Env = append(c.Env, e)
		}
	}
	return nil
}

// ReadRoleOptions are what each role's live pods say otherwise than the job bare builds (from
// what the job-wide attributes read): an image, CPU or memory (as request and limit) of its main
// container, variables it has that the rebuild lacks or holds otherwise, and its placement. What
// is left (a request apart from its limit, a variable from a Secret) is the pod patches'.
//
// exact (an import, which has no prior roles) also reads a role whose pods lack what the
// rebuild's have (a launcher without the workers' tolerations); otherwise (a refresh, against
// the job the state's roles build) that is no difference: a toleration added to the workers by
// hand reads as the job's, not as a launcher without it.
func (k *Kind) ReadRoleOptions(live, bare *unstructured.Unstructured, exact bool) map[string]RoleOptions {
	if k.templates == nil {
		return nil
	}
	bareTemplates := k.templates(bare)
	// The job-wide variables, as the primary role's container has them: a role's variable that
	// differs from one of them is its own; one the rebuild gives this role alone (mpi-operator's
	// variables list on the launcher) is this provider's, not a role setting.
	jobWide := map[string]corev1.EnvVar{}
	var primary corev1.PodTemplateSpec
	if fromMap(bareTemplates[primaryRole], &primary) == nil && len(primary.Spec.Containers) > 0 {
		for _, e := range primary.Spec.Containers[0].Env {
			jobWide[e.Name] = e
		}
	}
	out := map[string]RoleOptions{}
	for role, lm := range k.templates(live) {
		bm, ok := bareTemplates[role]
		if !ok {
			continue
		}
		var l, b corev1.PodTemplateSpec
		if fromMap(lm, &l) != nil || fromMap(bm, &b) != nil || len(l.Spec.Containers) == 0 || len(b.Spec.Containers) == 0 {
			continue
		}
		var r RoleOptions
		if has(l.Spec.NodeSelector, b.Spec.NodeSelector) || exact && has(b.Spec.NodeSelector, l.Spec.NodeSelector) {
			r.NodeSelector = l.Spec.NodeSelector
			if r.NodeSelector == nil {
				r.NodeSelector = map[string]string{}
			}
		}
		if hasToleration(l.Spec.Tolerations, b.Spec.Tolerations) || exact && hasToleration(b.Spec.Tolerations, l.Spec.Tolerations) {
			r.Tolerations = l.Spec.Tolerations
			if r.Tolerations == nil {
				r.Tolerations = []corev1.Toleration{}
			}
		}
		if l.Spec.PriorityClassName != b.Spec.PriorityClassName {
			r.PriorityClassName = l.Spec.PriorityClassName
		}
		lc, bc := l.Spec.Containers[0], b.Spec.Containers[0]
		if lc.Image != bc.Image {
			r.Image = lc.Image
		}
		r.CPU = differentQuantity(lc.Resources, bc.Resources, corev1.ResourceCPU)
		r.Memory = differentQuantity(lc.Resources, bc.Resources, corev1.ResourceMemory)
		for _, e := range lc.Env {
			if e.ValueFrom != nil {
				continue
			}
			i := slices.IndexFunc(bc.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name })
			if i < 0 || !reflect.DeepEqual(bc.Env[i], e) && reflect.DeepEqual(bc.Env[i], jobWide[e.Name]) {
				if r.Env == nil {
					r.Env = map[string]string{}
				}
				r.Env[e.Name] = e.Value
			}
		}
		if !r.empty() {
			out[role] = r
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// readRoles are what each role of the job object obj says otherwise than spec (read from obj,
// without roles) builds, as an import reads them: a reader gives back the whole spec.
func readRoles(k *Kind, spec Spec, obj *unstructured.Unstructured) map[string]RoleOptions {
	bare, _, err := spec.Build()
	if err != nil {
		return nil
	}
	return k.ReadRoleOptions(obj, bare, true)
}

// MergeRoleOptions is prior (the state's roles) with what read found otherwise (ReadRoleOptions
// of the live job against the job built with prior): each field read replaces the prior's.
func MergeRoleOptions(prior, read map[string]RoleOptions) map[string]RoleOptions {
	out := map[string]RoleOptions{}
	maps.Copy(out, prior)
	for role, r := range read {
		o := out[role]
		if r.Image != "" {
			o.Image = r.Image
		}
		if r.CPU != "" {
			o.CPU = r.CPU
		}
		if r.Memory != "" {
			o.Memory = r.Memory
		}
		if len(r.Env) > 0 {
			o.Env = maps.Clone(o.Env)
			if o.Env == nil {
				o.Env = map[string]string{}
			}
			maps.Copy(o.Env, r.Env)
		}
		if r.NodeSelector != nil {
			o.NodeSelector = r.NodeSelector
		}
		if r.Tolerations != nil {
			o.Tolerations = r.Tolerations
		}
		if r.PriorityClassName != "" {
			o.PriorityClassName = r.PriorityClassName
		}
		out[role] = o
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// differentQuantity is what the live container says of name as one value (quantityOf) where
// it differs from the rebuild's; "" otherwise.
func differentQuantity(live, rebuilt corev1.ResourceRequirements, name corev1.ResourceName) string {
	q, ok := quantityOf(live, name)
	if !ok {
		return ""
	}
	if r, ok := quantityOf(rebuilt, name); ok && r.Cmp(q) == 0 {
		return ""
	}
	return q.String()
}

// quantityOf is a container's quantity of name as one value, as a role's cpu or memory sets
// it: its limit where its request is the same, or its request where it has no limit (a CPU
// left unlimited); not ok for anything else.
func quantityOf(r corev1.ResourceRequirements, name corev1.ResourceName) (resource.Quantity, bool) {
	limit, hasLimit := r.Limits[name]
	request, hasRequest := r.Requests[name]
	switch {
	case hasRequest && !hasLimit:
		return request, true
	case hasRequest && limit.Cmp(request) == 0:
		return limit, true
	}
	return resource.Quantity{}, false
}

// has says whether a holds a label b lacks or holds otherwise.
func has(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return true
		}
	}
	return false
}

// hasToleration says whether a holds a toleration b lacks.
func hasToleration(a, b []corev1.Toleration) bool {
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y corev1.Toleration) bool { return equality.Semantic.DeepEqual(x, y) }) {
			return true
		}
	}
	return false
}

// primaryRole is the role the job-wide attributes are read from and say first.
const primaryRole = WorkerRole

// saidElsewhere refuses a workers' entry: the workers' settings are the job-wide attributes.
func (k *Kind) saidElsewhere(role string, _ RoleOptions) error {
	if role == primaryRole {
		return fmt.Errorf("the workers' settings are the job's own attributes (image, cpu, memory, env, node_selector, tolerations, " +
			"priority_class_name): set those")
	}
	return nil
}
