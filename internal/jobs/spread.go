package jobs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Spread spreads each role's pods over the domains of a topology (the nodes' values of
// TopologyKey: racks, zones, hosts): a topology spread constraint on the role's pod template
// whose selector is that role's pods of this job, by its operator's own labels, so that no two
// jobs, and no two roles of one job, count against each other.
type Spread struct {
	TopologyKey string
	// MaxSkew is how many more of the role's pods one domain may hold than another.
	MaxSkew int32
	// WhenUnsatisfiable is DoNotSchedule (the pods wait) or ScheduleAnyway (the scheduler prefers).
	WhenUnsatisfiable corev1.UnsatisfiableConstraintAction
}

// validateSpread refuses what the API server would: a malformed topology key, a skew below 1,
// an action it does not know, or two constraints of one key and action (RepeatedSpread).
func validateSpread(spread []Spread) error {
	for _, s := range spread {
		if errs := validation.IsQualifiedName(s.TopologyKey); len(errs) > 0 {
			return fmt.Errorf("topology_spread: topology key %q is not a label key: %s", s.TopologyKey, errs[0])
		}
		if s.MaxSkew < 1 {
			return fmt.Errorf("topology_spread %s: max_skew must be at least 1, not %d", s.TopologyKey, s.MaxSkew)
		}
		if s.WhenUnsatisfiable != corev1.DoNotSchedule && s.WhenUnsatisfiable != corev1.ScheduleAnyway {
			return fmt.Errorf("topology_spread %s: when_unsatisfiable must be %s or %s, not %q", s.TopologyKey, corev1.DoNotSchedule, corev1.ScheduleAnyway, s.WhenUnsatisfiable)
		}
	}
	if repeated := RepeatedSpread(spread); len(repeated) > 0 {
		return fmt.Errorf("topology_spread: %s", SpreadRepeated(spread[repeated[0]]))
	}
	return nil
}

// RepeatedSpread are the indexes of the entries of spread that give the topology key and action
// of an earlier one, which the API server refuses.
func RepeatedSpread(spread []Spread) []int {
	var out []int
	seen := map[Spread]bool{}
	for i, s := range spread {
		key := Spread{TopologyKey: s.TopologyKey, WhenUnsatisfiable: s.WhenUnsatisfiable}
		if seen[key] {
			out = append(out, i)
		}
		seen[key] = true
	}
	return out
}

// SpreadRepeated says why a repeated entry (RepeatedSpread) is refused.
func SpreadRepeated(s Spread) string {
	return fmt.Sprintf("%s with %s is given twice: the API server refuses two constraints of one key and one action", s.TopologyKey, s.WhenUnsatisfiable)
}

// roleSelector selects one role's pods of one job: the job's pods (the kind's pod selector)
// whose role label is role. Every kind's operator labels a role's pods with the role's name as
// its templates are keyed (the replica type in lower case, the task role's name).
func (k *Kind) roleSelector(job, role string) (map[string]string, []string, error) {
	set, err := labels.ConvertSelectorToLabelsMap(k.podSelector(job))
	if err != nil {
		return nil, nil, err
	}
	set[k.RoleLabel] = role
	return set, nil, nil
}

// runtimeRoleSelector selects one replicated job's pods of one TrainJob made from a runtime: the
// runtime cannot know the job's name, so matchLabelKeys takes it from each pod's own JobSet
// label.
func runtimeRoleSelector(_, role string) (map[string]string, []string, error) {
	return map[string]string{ReplicatedJobLabel: role}, []string{JobSetNameLabel}, nil
}

// applySpread adds the spread constraints to every role's pod template of obj (templates),
// each selecting that role's own pods (selector).
func applySpread(obj *unstructured.Unstructured, templates map[string]map[string]any, spread []Spread,
	selector func(job, role string) (map[string]string, []string, error)) error {
	if len(spread) == 0 {
		return nil
	}
	if err := validateSpread(spread); err != nil {
		return err
	}
	for role, m := range templates {
		match, keys, err := selector(obj.GetName(), role)
		if err != nil {
			return err
		}
		if err := editTemplate(m, func(t *corev1.PodTemplateSpec) error {
			for _, s := range spread {
				t.Spec.TopologySpreadConstraints = append(t.Spec.TopologySpreadConstraints, s.constraint(match, keys))
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// constraint is the topology spread constraint s makes for the pods match and keys select.
func (s Spread) constraint(match map[string]string, keys []string) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: s.MaxSkew, TopologyKey: s.TopologyKey, WhenUnsatisfiable: s.WhenUnsatisfiable,
		LabelSelector: &metav1.LabelSelector{MatchLabels: match}, MatchLabelKeys: keys}
}

// ownSpread is what a role's template says of topology_spread: its constraints that are
// exactly what applySpread makes (the role's selector, nothing else set). A constraint made
// otherwise (another selector, minDomains) is left for the pod patch's read to find.
func ownSpread(t corev1.PodTemplateSpec, match map[string]string, keys []string) []Spread {
	var out []Spread
	for _, c := range t.Spec.TopologySpreadConstraints {
		s := Spread{TopologyKey: c.TopologyKey, MaxSkew: c.MaxSkew, WhenUnsatisfiable: c.WhenUnsatisfiable}
		if equality.Semantic.DeepEqual(c, s.constraint(match, keys)) {
			out = append(out, s)
		}
	}
	return out
}

// readSpread is ownSpread of a kind's role.
func (k *Kind) readSpread(t corev1.PodTemplateSpec, job, role string) []Spread {
	match, keys, err := k.roleSelector(job, role)
	if err != nil {
		return nil
	}
	return ownSpread(t, match, keys)
}
