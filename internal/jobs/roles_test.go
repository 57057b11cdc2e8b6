package jobs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// A master on CPU nodes with an image, resources and a variable of its own: its pods say it,
// the workers' keep the job's, and the read gives the same options back.
func TestRoleOptionsOverrideTheJobsForTheirRoleAndReadBack(t *testing.T) {
	spec := arenaPyTorchSpec()
	spec.Pod.Tolerations = []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}
	spec.Pod.Roles = map[string]RoleOptions{
		"master": {Image: "registry.example/master:1", CPU: "3", Memory: "2Gi", NodeSelector: map[string]string{"pool": "cpu"},
			Tolerations: []corev1.Toleration{}, Env: map[string]string{"ROLE": "master"}},
	}
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	l, w := templateOf(t, PyTorch, obj, "master"), templateOf(t, PyTorch, obj, "worker")
	if c := l.Spec.Containers[0]; c.Image != "registry.example/master:1" || c.Resources.Limits.Cpu().String() != "3" ||
		c.Resources.Requests.Memory().String() != "2Gi" || l.Spec.NodeSelector["pool"] != "cpu" || len(l.Spec.Tolerations) != 0 ||
		!strings.Contains(envString(c.Env), "ROLE=master") {
		t.Errorf("the master's pods do not say its options: %+v", l.Spec)
	}
	if c := w.Spec.Containers[0]; c.Image != spec.Pod.Image || len(w.Spec.Tolerations) != 1 || strings.Contains(envString(c.Env), "ROLE=") {
		t.Errorf("the workers' pods do not keep the job's settings: %+v", w.Spec)
	}

	plain := arenaPyTorchSpec()
	plain.Pod.Tolerations = spec.Pod.Tolerations
	bare, _, err := plain.Build()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec.Pod.Roles, PyTorch.ReadRoleOptions(obj, bare, true)); diff != "" {
		t.Errorf("an import reads other roles (-set +read):\n%s", diff)
	}
	// What the pods lack of the job's (the launcher's tolerations) is no difference to a
	// refresh's read alone.
	want := map[string]RoleOptions{
		"master": {Image: "registry.example/master:1", CPU: "3", Memory: "2Gi", NodeSelector: map[string]string{"pool": "cpu"},
			Env: map[string]string{"ROLE": "master"}},
	}
	if diff := cmp.Diff(want, PyTorch.ReadRoleOptions(obj, bare, false)); diff != "" {
		t.Errorf("the roles read back differ (-set +read):\n%s", diff)
	}
	// A refresh reads against the job the state's roles build, and keeps them where still true.
	if diff := cmp.Diff(spec.Pod.Roles, MergeRoleOptions(spec.Pod.Roles, PyTorch.ReadRoleOptions(obj, obj, false))); diff != "" {
		t.Errorf("a refresh does not keep the state's roles (-state +read):\n%s", diff)
	}
	changed := obj.DeepCopy()
	launcher := PyTorch.templates(changed)["master"]
	launcherSpec, _ := launcher["spec"].(map[string]any)
	containers, _ := launcherSpec["containers"].([]any)
	c0, _ := containers[0].(map[string]any)
	c0["image"] = "registry.example/edited:2"
	if got := MergeRoleOptions(spec.Pod.Roles, PyTorch.ReadRoleOptions(changed, obj, false)); got["master"].Image != "registry.example/edited:2" ||
		got["master"].Tolerations == nil {
		t.Errorf("a master image changed by hand reads as %+v", got["master"])
	}
	if got := PyTorch.ReadRoleOptions(bare, bare, true); got != nil {
		t.Errorf("a job without role options reads some: %v", got)
	}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{withRoles(arenaPyTorchSpec(), map[string]RoleOptions{"ps": {CPU: "1"}}), `roles["ps"]: this job has no role "ps"`},
		{withRoles(arenaPyTorchSpec(), map[string]RoleOptions{"worker": {CPU: "1"}}), `roles["worker"]: the workers' settings are the job's own attributes`},
	} {
		if _, _, err := tc.spec.Build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.spec.Kind().Name, err, tc.want)
		}
	}
}

func envString(env []corev1.EnvVar) string {
	var out []string
	for _, e := range env {
		out = append(out, e.Name+"="+e.Value)
	}
	return strings.Join(out, " ")
}

// withRoles is spec with its pods' role options set.
func withRoles(spec Spec, roles map[string]RoleOptions) Spec {
	v := reflect.New(reflect.TypeOf(spec)).Elem()
	v.Set(reflect.ValueOf(spec))
	v.FieldByName("Pod").FieldByName("Roles").Set(reflect.ValueOf(roles))
	out, _ := v.Interface().(Spec)
	return out
}
