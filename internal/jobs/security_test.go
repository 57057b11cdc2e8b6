package jobs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// restricted is what Pod Security "restricted" asks of a pod, as the docs' example sets it.
func restricted() *Security {
	return &Security{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000), FSGroup: ptr.To[int64](1000),
		SeccompProfile: "RuntimeDefault", AllowPrivilegeEscalation: ptr.To(false), DropCapabilities: []string{"ALL"}}
}

// withSecurity is spec with its pods' security context set.
func withSecurity(spec Spec, s *Security) Spec {
	v := reflect.New(reflect.TypeOf(spec)).Elem()
	v.Set(reflect.ValueOf(spec))
	v.FieldByName("Pod").FieldByName("Security").Set(reflect.ValueOf(s))
	out, _ := v.Interface().(Spec)
	return out
}

var restrictedNamespace = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}

func TestEveryKindsPodsAsItsOperatorMakesThemPassRestrictedWithTheSecurityContextAndFailWithout(t *testing.T) {
	for _, k := range Kinds() {
		ex := kindExamples[k]
		var runtime *unstructured.Unstructured
		if ex.runtime != nil {
			runtime = ex.runtime(t)
		}
		check := func(spec Spec) []PodSecurityRefusal {
			obj, _, err := spec.Build()
			if err != nil {
				t.Fatalf("kind %s: %v", k.Name, err)
			}
			roles, err := k.Roles(obj, runtime)
			if err != nil {
				t.Fatalf("kind %s: %v", k.Name, err)
			}
			refusals, err := CheckPodSecurity(restrictedNamespace, "v1.34", roles)
			if err != nil {
				t.Fatal(err)
			}
			return refusals
		}
		if refusals := check(ex.spec(false)); len(refusals) == 0 {
			t.Errorf("kind %s: its pods without a security context pass restricted", k.Name)
		} else if r := refusals[0].Error(); !strings.Contains(r, "allowPrivilegeEscalation != false") || !strings.Contains(r, `"restricted:latest"`) {
			t.Errorf("kind %s: the refusal does not say why in the admission's words: %s", k.Name, r)
		}
		secured := withSecurity(ex.spec(false), restricted())
		refusals := check(secured)
		switch {
		case k.OperatorDrops == "" && len(refusals) > 0:
			t.Errorf("kind %s: its pods with a restricted security context are refused: %v", k.Name, refusals)
		case k.OperatorDrops != "" && (len(refusals) == 0 || !strings.Contains(refusals[0].Error(), "seccompProfile")):
			// The operator drops the seccomp profile (FrameworkController v1.0.1).
			t.Errorf("kind %s: its pods as %s makes them pass restricted: %v", k.Name, k.Operator, refusals)
		}

		obj, _, err := secured.Build()
		if err != nil {
			t.Fatal(err)
		}
		read, err := ex.read(obj)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(restricted(), read.Pods().Security); diff != "" {
			t.Errorf("kind %s: the security context read back differs (-set +read):\n%s", k.Name, diff)
		}
	}
}

func TestCheckPodSecurityEnforcesOnlyWhatTheNamespaceSays(t *testing.T) {
	roles := []RolePods{{Role: "worker", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "worker", Image: "busybox"}}}}}}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		refuse bool
	}{
		{"no label", nil, false},
		{"privileged", map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}, false},
		{"baseline", map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, false},
		{"warn only", map[string]string{"pod-security.kubernetes.io/warn": "restricted"}, false},
		{"restricted", restrictedNamespace, true},
		{"restricted at v1.25", map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.25"}, true},
	} {
		refusals, err := CheckPodSecurity(tc.labels, "v1.34", roles)
		if err != nil || (len(refusals) > 0) != tc.refuse {
			t.Errorf("%s: refusals %v, %v; want refused %v", tc.name, refusals, err, tc.refuse)
		}
	}
	roles[0].Template.Spec.HostNetwork = true
	refusals, _ := CheckPodSecurity(map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, "v1.34", roles)
	if len(refusals) != 1 || !strings.Contains(refusals[0].Error(), "host namespaces") {
		t.Errorf("baseline with hostNetwork: %v", refusals)
	}
	if _, err := CheckPodSecurity(map[string]string{"pod-security.kubernetes.io/enforce": "strict"}, "v1.34", roles); err == nil {
		t.Error("an unknown level is not an error")
	}
}

func TestSecurityValidateRefusesWhatTheAPIServerOrTheKubeletWould(t *testing.T) {
	for _, tc := range []struct {
		s    Security
		want string
	}{
		{Security{RunAsUser: ptr.To[int64](-1)}, "run_as_user -1 is negative"},
		{Security{FSGroup: ptr.To[int64](-5)}, "fs_group -5 is negative"},
		{Security{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0)}, "run_as_non_root with run_as_user 0"},
		{Security{SeccompProfile: "runtime/default"}, "is not one of RuntimeDefault, Unconfined, localhost/PATH"},
		{Security{SeccompProfile: "localhost/"}, "is not one of"},
		{Security{DropCapabilities: []string{"CAP_SYS_ADMIN"}}, "without CAP_"},
		{Security{AddCapabilities: []string{"net_admin"}}, "in capitals"},
	} {
		err := tc.s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
	ok := Security{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), SeccompProfile: "localhost/profiles/train.json", DropCapabilities: []string{"ALL"}, AddCapabilities: []string{"IPC_LOCK"}}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}

func TestSecurityGoesOnThePodAndOnEveryContainerThisProviderWrites(t *testing.T) {
	spec := withSecurity(arenaSSDSpec(), restricted())
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	roles, err := MPI.Roles(obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) < 2 {
		t.Fatalf("an MPI job has its launcher and its workers, not %v", roles)
	}
	for _, r := range roles {
		p := r.Template.Spec.SecurityContext
		if p == nil || !ptr.Deref(p.RunAsNonRoot, false) || p.SeccompProfile == nil || p.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("role %s: pod security context %+v", r.Role, p)
		}
		for _, c := range r.Template.Spec.Containers {
			if c.SecurityContext == nil || ptr.Deref(c.SecurityContext.AllowPrivilegeEscalation, true) || c.SecurityContext.Capabilities == nil {
				t.Errorf("role %s container %s: security context %+v", r.Role, c.Name, c.SecurityContext)
			}
		}
	}
}

func TestAnMPIRuntimeReadsBackItsUsersGroupAsItsDefaultNotAsASecurityContext(t *testing.T) {
	spec := RuntimeSpec{Name: "mpi", Framework: FrameworkMPI, Pod: PodOptions{Image: "mpi:1"}, MPI: &MPIPolicy{RunAsUser: 1000, SSHAuthMountPath: "/home/mpiuser/.ssh"}}
	obj, err := NewRuntime(spec)
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadRuntime(obj)
	if err != nil {
		t.Fatal(err)
	}
	if read.Pod.Security != nil {
		t.Errorf("the fsGroup the MPI runtime sets by default reads back as a security context: %+v", read.Pod.Security)
	}
	spec.Pod.Security = &Security{RunAsUser: ptr.To[int64](1000)}
	if _, err := NewRuntime(spec); err == nil || !strings.Contains(err.Error(), "mpi run_as_user") {
		t.Errorf("an MPI runtime with a security context's run_as_user: %v", err)
	}
}
