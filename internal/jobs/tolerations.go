package jobs

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TolerateAll is Arena's word for tolerating every taint.
const TolerateAll = "all"

// ParseToleration reads one toleration in Arena's grammar (its --toleration):
//
//	all                                every taint (operator Exists, no key)
//	KEY                                any taint with that key (operator Exists)
//	KEY:EFFECT                         that key with that effect (operator Exists)
//	KEY=VALUE                          that key and value, any effect (operator Equal)
//	KEY=VALUE:EFFECT                   that key, value and effect (operator Equal)
//	KEY[=VALUE]:EFFECT:OPERATOR[:SECS] with the operator (and the seconds a NoExecute taint is tolerated)
//	KEY=VALUE:EFFECT,OPERATOR          Arena's older spelling of the same
//
// EFFECT is NoSchedule, PreferNoSchedule or NoExecute and OPERATOR Equal or Exists, spelled
// exactly; anything else is an error, as is a toleration the API server would refuse (see
// CheckToleration). `All` and `ALL` are errors that point to `all`.
func ParseToleration(s string) (corev1.Toleration, error) {
	if s == TolerateAll {
		return corev1.Toleration{Operator: corev1.TolerationOpExists}, nil
	}
	if strings.EqualFold(s, TolerateAll) {
		return corev1.Toleration{}, fmt.Errorf("toleration %q: Arena's word for tolerating every taint is %q, in lower case "+
			"(%q would tolerate only taints whose key is %q)", s, TolerateAll, s, s)
	}
	rest, suffix, hasEffect := strings.Cut(s, ":")
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
		t.Operator, t.Value = corev1.TolerationOpEqual, value
	}
	if !hasEffect {
		return t, CheckToleration(t)
	}
	// EFFECT, EFFECT:OPERATOR, EFFECT:OPERATOR:SECONDS, or (with a value) EFFECT,OPERATOR.
	fields := strings.Split(suffix, ":")
	if effect, operator, legacy := strings.Cut(fields[0], ","); legacy {
		if !hasValue || len(fields) > 1 {
			return t, fmt.Errorf("toleration %q: the EFFECT,OPERATOR form is KEY=VALUE:EFFECT,OPERATOR", s)
		}
		fields = []string{effect, operator}
	}
	if len(fields) > 3 {
		return t, fmt.Errorf("toleration %q has too many parts (the longest form is KEY=VALUE:EFFECT:OPERATOR:SECONDS)", s)
	}
	switch e := corev1.TaintEffect(fields[0]); e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		t.Effect = e
	default:
		return t, fmt.Errorf("toleration %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", s, fields[0])
	}
	if len(fields) > 1 {
		switch op := corev1.TolerationOperator(fields[1]); op {
		case corev1.TolerationOpEqual, corev1.TolerationOpExists:
			t.Operator = op
		default:
			return t, fmt.Errorf("toleration %q: operator %q is not one of Equal, Exists", s, fields[1])
		}
	}
	if len(fields) > 2 {
		seconds, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || seconds < 0 {
			return t, fmt.Errorf("toleration %q: %q is not a number of seconds", s, fields[2])
		}
		t.TolerationSeconds = &seconds
	}
	if err := CheckToleration(t); err != nil {
		return t, fmt.Errorf("toleration %q: %w", s, err)
	}
	return t, nil
}

// CheckToleration applies the API server's rules for a pod's toleration, so that a job whose
// pods would be refused is refused at plan instead: an empty key needs operator Exists (it then
// matches every taint), operator Exists takes no value, an Equal value must be a label value,
// and toleration seconds go only with the NoExecute effect.
func CheckToleration(t corev1.Toleration) error {
	switch {
	case t.Key == "" && t.Operator != corev1.TolerationOpExists:
		return fmt.Errorf("a toleration without a key must have operator Exists (it tolerates every taint), not %q", cmp.Or(string(t.Operator), "Equal"))
	case t.Operator == corev1.TolerationOpExists && t.Value != "":
		return fmt.Errorf("a toleration with operator Exists takes no value (it tolerates every value), not %q", t.Value)
	case t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute:
		return fmt.Errorf("toleration seconds go only with the NoExecute effect (how long a pod stays once such a taint appears), not with %q", cmp.Or(string(t.Effect), "any effect"))
	}
	if t.Value != "" {
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return fmt.Errorf("taint value %q is invalid: %s", t.Value, strings.Join(errs, "; "))
		}
	}
	return nil
}

// FormatToleration writes a toleration in Arena's grammar; ok is false when it has no such form
// (operator Exists with a value, Equal with none, an effect without a key).
func FormatToleration(t corev1.Toleration) (s string, ok bool) {
	if t.TolerationSeconds != nil {
		// KEY[=VALUE]:EFFECT:OPERATOR:SECONDS, the one form with seconds.
		s, ok = FormatToleration(corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value})
		if !ok || t.Key == "" || t.Effect == "" {
			return "", false
		}
		return fmt.Sprintf("%s:%s:%s:%d", s, t.Effect, cmp.Or(t.Operator, corev1.TolerationOpEqual), *t.TolerationSeconds), true
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

// FormatTolerations splits tolerations into those Arena's grammar can say, written in it, and the
// rest, each in its order.
func FormatTolerations(ts []corev1.Toleration) (said []string, rest []corev1.Toleration) {
	for _, t := range ts {
		if s, ok := FormatToleration(t); ok {
			said = append(said, s)
		} else {
			rest = append(rest, t)
		}
	}
	return said, rest
}
