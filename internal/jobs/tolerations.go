package jobs

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TolerateAll is Arena's word for tolerating every taint.
const TolerateAll = "all"

// ParseToleration reads one toleration in Arena's grammar:
//
//	all               every taint (operator Exists, no key)
//	KEY               any taint with that key (operator Exists)
//	KEY:EFFECT        that key with that effect (operator Exists)
//	KEY=VALUE         that key and value, any effect (operator Equal)
//	KEY=VALUE:EFFECT  that key, value and effect (operator Equal)
//
// EFFECT is NoSchedule, PreferNoSchedule or NoExecute, spelled exactly; anything else is an error.
func ParseToleration(s string) (corev1.Toleration, error) {
	if s == TolerateAll {
		return corev1.Toleration{Operator: corev1.TolerationOpExists}, nil
	}
	rest, effect, hasEffect := strings.Cut(s, ":")
	key, value, hasValue := strings.Cut(rest, "=")
	t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists}
	if key == "" {
		return t, fmt.Errorf("toleration %q has an empty taint key (write KEY, KEY=VALUE, KEY:EFFECT, KEY=VALUE:EFFECT or %q)", s, TolerateAll)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, fmt.Errorf("toleration %q: taint key %q is invalid: %s", s, key, strings.Join(errs, "; "))
	}
	if hasValue {
		if value == "" {
			return t, fmt.Errorf("toleration %q has an empty value after '=' (drop the '=' to tolerate any value)", s)
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return t, fmt.Errorf("toleration %q: taint value %q is invalid: %s", s, value, strings.Join(errs, "; "))
		}
		t.Operator, t.Value = corev1.TolerationOpEqual, value
	}
	if hasEffect {
		switch e := corev1.TaintEffect(effect); e {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
			t.Effect = e
		default:
			return t, fmt.Errorf("toleration %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", s, effect)
		}
	}
	return t, nil
}

// FormatToleration writes a toleration in Arena's grammar; ok is false when it has no such form
// (a toleration period, or operator Exists with a value).
func FormatToleration(t corev1.Toleration) (s string, ok bool) {
	if t.TolerationSeconds != nil {
		return "", false
	}
	switch {
	case t.Operator == corev1.TolerationOpExists && t.Key == "" && t.Value == "" && t.Effect == "":
		return TolerateAll, true
	case t.Key == "":
		return "", false
	case (t.Operator == corev1.TolerationOpExists) && t.Value == "":
		s = t.Key
	case (t.Operator == corev1.TolerationOpEqual || t.Operator == "") && t.Value != "":
		s = t.Key + "=" + t.Value
	default:
		return "", false
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s, true
}
