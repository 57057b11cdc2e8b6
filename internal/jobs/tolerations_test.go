package jobs

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestParseToleration(t *testing.T) {
	accepted := []struct {
		in   string
		want corev1.Toleration
	}{
		{"all", corev1.Toleration{Operator: corev1.TolerationOpExists}},
		{"ssd_node", corev1.Toleration{Key: "ssd_node", Operator: corev1.TolerationOpExists}},
		{"gpu_node:NoSchedule", corev1.Toleration{Key: "gpu_node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		{"gpu_node=invalid", corev1.Toleration{Key: "gpu_node", Operator: corev1.TolerationOpEqual, Value: "invalid"}},
		{"gpu_node=invalid:NoSchedule", corev1.Toleration{Key: "gpu_node", Operator: corev1.TolerationOpEqual, Value: "invalid", Effect: corev1.TaintEffectNoSchedule}},
		{"node.kubernetes.io/unreachable:NoExecute", corev1.Toleration{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		{"dedicated=ml:PreferNoSchedule", corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectPreferNoSchedule}},
	}
	// parses checks that in parses to want.
	parses := func(in string, want corev1.Toleration) (corev1.Toleration, bool) {
		t.Helper()
		got, err := ParseToleration(in)
		if err != nil {
			t.Errorf("ParseToleration(%q): %v", in, err)
			return got, false
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ParseToleration(%q) (-want +got):\n%s", in, diff)
		}
		return got, true
	}
	for _, c := range accepted {
		got, ok := parses(c.in, c.want)
		if !ok {
			continue
		}
		// Every accepted form is written back the same way, so import round-trips.
		if s, ok := FormatToleration(got); !ok || s != c.in {
			t.Errorf("FormatToleration(ParseToleration(%q)) = %q, %v", c.in, s, ok)
		}
	}

	// Arena's longer forms, which import writes in the shorter ones (or as a block, with seconds).
	longer := []struct {
		in   string
		want corev1.Toleration
	}{
		{"gpu_node=invalid:NoSchedule,Equal", corev1.Toleration{Key: "gpu_node", Operator: corev1.TolerationOpEqual, Value: "invalid", Effect: corev1.TaintEffectNoSchedule}},
		{"gpu_node:NoSchedule:Exists", corev1.Toleration{Key: "gpu_node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		{"dedicated=teamA:NoSchedule:Equal", corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "teamA", Effect: corev1.TaintEffectNoSchedule}},
		{"node.kubernetes.io/unreachable:NoExecute:Exists:60", corev1.Toleration{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}},
		{"dedicated=teamA:NoExecute:Equal:300", corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "teamA",
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}},
	}
	for _, c := range longer {
		parses(c.in, c.want)
	}

	rejected := []struct{ in, why string }{
		{"", "empty taint key"},
		{":NoSchedule", "empty taint key"},
		{"=v", "empty taint key"},
		{"gpu_node=invalid:NoSchedul", `effect "NoSchedul"`},
		{"gpu_node:noschedule", `effect "noschedule"`},
		{"gpu_node:", `effect ""`},
		{"gpu_node=", "empty value"},
		{"gpu_node=:NoSchedule", "empty value"},
		{"bad key", "is invalid"},
		{"gpu_node=bad value", "is invalid"},
		{"ALL ", "is invalid"},
		{"All", `in lower case`},
		{"ALL", `in lower case`},
		{"gpu_node=invalid:NoSchedule:Exists", "operator Exists takes no value"},
		{"gpu_node:NoSchedule:Exists:60", "only with the NoExecute effect"},
		{"gpu_node:NoExecute:Sometimes", `operator "Sometimes"`},
		{"gpu_node:NoExecute:Exists:soon", "not a number of seconds"},
		{"gpu_node:NoExecute:Exists:60:1", "too many parts"},
		{"gpu_node:NoSchedule,Exists", "KEY=VALUE:EFFECT,OPERATOR"},
	}
	for _, c := range rejected {
		_, err := ParseToleration(c.in)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseToleration(%q) = %v, want an error containing %q", c.in, err, c.why)
		}
	}
}

// A toleration with seconds has its string form, read back as itself; the few without one (an
// effect without a key, Equal without a value) are said by pod_patch.
func TestFormatTolerationWithAndWithoutStringForm(t *testing.T) {
	for want, tol := range map[string]corev1.Toleration{
		"k:NoExecute:Exists:30": {Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)},
		"k=v:NoExecute:Equal:0": {Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](0)},
		"node.kubernetes.io/unreachable:NoExecute:Exists:300": {Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	} {
		s, ok := FormatToleration(tol)
		if !ok || s != want {
			t.Errorf("FormatToleration(%+v) = %q, %v; want %q", tol, s, ok, want)
			continue
		}
		if back, err := ParseToleration(s); err != nil || !reflect.DeepEqual(back, tol) {
			t.Errorf("ParseToleration(%q) = %+v, %v; want %+v", s, back, err, tol)
		}
	}
	for _, tol := range []corev1.Toleration{
		{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "k", Operator: corev1.TolerationOpEqual},
	} {
		if s, ok := FormatToleration(tol); ok {
			t.Errorf("FormatToleration(%+v) = %q; it has no string form", tol, s)
		}
	}
}

func TestParseDataVolume(t *testing.T) {
	v, err := ParseDataVolume("training-data:/data")
	if err != nil || v != (DataVolume{Claim: "training-data", MountPath: "/data"}) {
		t.Fatalf("ParseDataVolume = %+v, %v", v, err)
	}
	for _, bad := range []string{"no-path", "Bad_Claim:/data", "data:relative", "data:/a/../b", "data:/dev/shm", ":/data"} {
		if _, err := ParseDataVolume(bad); err == nil {
			t.Errorf("ParseDataVolume(%q) accepted", bad)
		}
	}
}

// Environment from Secrets reaches the pod template as references (the values are never the
// provider's), and is read back as it was given, apart from the plain variables.
func TestSecretEnvRoundTrips(t *testing.T) {
	o := PodOptions{Image: "x", Env: map[string]string{"A": "1"},
		SecretEnv:      map[string]SecretKey{"API_KEY": {Secret: "wandb", Key: "api-key"}},
		EnvFromSecrets: []string{"hf-token", "s3"}}
	tmpl, err := o.podTemplate(container{name: "c"}, corev1.RestartPolicyNever)
	if err != nil {
		t.Fatal(err)
	}
	c := tmpl.Spec.Containers[0]
	var ref *corev1.SecretKeySelector
	for _, e := range c.Env {
		if e.Name == "API_KEY" {
			if e.Value != "" || e.ValueFrom == nil {
				t.Fatalf("API_KEY is %+v, want a secretKeyRef and no value", e)
			}
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil || ref.Name != "wandb" || ref.Key != "api-key" {
		t.Fatalf("API_KEY's secretKeyRef is %+v", ref)
	}
	if len(c.EnvFrom) != 2 || c.EnvFrom[0].SecretRef.Name != "hf-token" || c.EnvFrom[1].SecretRef.Name != "s3" {
		t.Fatalf("envFrom is %+v", c.EnvFrom)
	}
	back := readPodOptions(tmpl)
	if diff := cmp.Diff(o.SecretEnv, back.SecretEnv); diff != "" {
		t.Errorf("secret env read back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(o.EnvFromSecrets, back.EnvFromSecrets); diff != "" {
		t.Errorf("envFrom read back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(o.Env, back.Env); diff != "" {
		t.Errorf("plain env read back (-want +got):\n%s", diff)
	}
}

// FormatTolerations says in Arena's grammar the tolerations that have a form in it, and gives
// back the others, each in its order.
func TestFormatTolerationsSplitsWhatArenaCanSay(t *testing.T) {
	gpu, _ := ParseToleration("gpu_node")
	ssd, _ := ParseToleration("ssd=fast:NoSchedule")
	keyless := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	said, rest := FormatTolerations([]corev1.Toleration{gpu, keyless, ssd})
	if !slices.Equal(said, []string{"gpu_node", "ssd=fast:NoSchedule"}) || len(rest) != 1 || rest[0] != keyless {
		t.Errorf("FormatTolerations = %q, %v", said, rest)
	}
}
