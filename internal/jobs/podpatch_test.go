package jobs

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sidecarPatch adds to a role's pods a native sidecar, a memory-backed volume mounted in the
// main container (merged into it by its name), host IPC and a grace period, in YAML.
const sidecarPatch = `
spec:
  hostIPC: true
  terminationGracePeriodSeconds: 120
  initContainers:
    - name: log-shipper
      image: registry.example/fluent-bit:3
      restartPolicy: Always
  volumes:
    - name: scratch
      emptyDir: {medium: Memory}
  containers:
    - name: worker
      volumeMounts:
        - name: scratch
          mountPath: /scratch
`

func templateOf(t *testing.T, k *Kind, obj *unstructured.Unstructured, role string) corev1.PodTemplateSpec {
	t.Helper()
	var out corev1.PodTemplateSpec
	if err := fromMap(k.templates(obj)[role], &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPodPatchMergesIntoTheRoleItNamesOnly(t *testing.T) {
	spec := arenaSSDSpec()
	spec.Pod.Patches = map[string]string{"worker": sidecarPatch}
	obj, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	w := templateOf(t, MPI, obj, "worker")
	if !w.Spec.HostIPC || len(w.Spec.InitContainers) != 1 || w.Spec.InitContainers[0].RestartPolicy == nil ||
		*w.Spec.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("the worker's pod spec lacks the patch's sidecar or host IPC: %+v", w.Spec)
	}
	main := w.Spec.Containers[0]
	mounted := slices.ContainsFunc(main.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/scratch" })
	if main.Name != "worker" || main.Image != spec.Pod.Image || !mounted || len(main.VolumeMounts) != 3 {
		t.Errorf("the patch's mount is not merged into the main container by name: %+v", main)
	}
	if l := templateOf(t, MPI, obj, "launcher"); l.Spec.HostIPC || len(l.Spec.InitContainers) > 0 {
		t.Errorf("the launcher got the workers' patch: %+v", l.Spec)
	}
}

func TestParsePodPatchNamesTheFieldItCannotRead(t *testing.T) {
	for _, tc := range []struct{ patch, want string }{
		{"spec:\n  containers:\n    - name: worker\n      imagee: x\n", `unknown field "spec.containers[0].imagee"`},
		{"spec:\n  volumes:\n    - name: v\n      nfsv4: {server: s}\n", `unknown field "spec.volumes[0].nfsv4"`},
		{"spec:\n  hostNetwork: \"yes\"\n", "hostNetwork"},
		{"- spec", "not - spec"},
		{"spec: [", "not YAML or JSON"},
		{"metadata:\n  annotations: {owner: ml}\n", "metadata: a pod patch changes the pods' spec"},
	} {
		if _, err := ParsePodPatch(tc.patch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.patch, err, tc.want)
		}
	}
	if _, err := ParsePodPatch(`{"spec": {"containers": [{"name": "worker", "$patch": "merge"}], "$retainKeys": ["volumes"]}}`); err != nil {
		t.Errorf("strategic merge directives are refused: %v", err)
	}
}

func TestPodPatchIsRefusedWhereItWouldBreakWhatTheOperatorOrTheProviderReliesOn(t *testing.T) {
	for _, tc := range []struct{ role, patch, want string }{
		{"worker", "spec:\n  containers:\n    - name: worker\n      $patch: delete\n", `the first container must stay "worker"`},
		{"worker", "spec:\n  containers:\n    - name: trainer\n      image: x\n  $setElementOrder/containers:\n    - name: trainer\n    - name: worker\n", `the first container must stay "worker"`},
		{"worker", "spec:\n  containers:\n    - name: worker\n      image: other\n", "set image instead"},
		{"worker", "spec:\n  containers:\n    - name: worker\n      command: [sleep]\n", "set the resource's command instead"},
		{"launcher", "spec:\n  containers:\n    - name: launcher\n      env:\n        - name: OMPI_MCA_mca_base_env_list\n          value: X\n", "set env instead"},
		{"worker", "spec:\n  restartPolicy: Always\n", "restartPolicy"},
		{"master", "spec:\n  hostIPC: true\n", `this job has no role "master"; its roles are launcher, worker`},
	} {
		spec := arenaSSDSpec()
		spec.Pod.Env = map[string]string{"EPOCHS": "3"}
		spec.Pod.Patches = map[string]string{tc.role: tc.patch}
		if _, _, err := spec.Build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want %q", tc.role, tc.patch, err, tc.want)
		}
	}
}

func TestReadPodPatchesExpressesWhatKubectlAddedAndKeepsTheConfigurationsWords(t *testing.T) {
	for _, k := range Kinds() {
		if k.templates == nil {
			continue
		}
		bare, _, err := kindExamples[k].spec(false).Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := k.ReadPodPatches(bare, bare, nil); got != nil {
			t.Errorf("kind %s: its own job reads as patched: %v", k.Name, got)
		}
		role := k.PatchRoles()[len(k.PatchRoles())-1] // worker
		live := bare.DeepCopy()
		if err := applyPodPatches(k, live, map[string]string{role: "spec:\n  initContainers:\n    - name: fetch\n      image: busybox\n"}); err != nil {
			t.Fatal(err)
		}
		read := k.ReadPodPatches(live, bare, nil)
		if len(read) != 1 || !strings.Contains(read[role], `"initContainers":[{"image":"busybox","name":"fetch"`) {
			t.Fatalf("kind %s: the init container added by hand reads as %v", k.Name, read)
		}
		again := bare.DeepCopy()
		if err := applyPodPatches(k, again, read); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(normalTemplate(k.templates(live)[role]), normalTemplate(k.templates(again)[role])); diff != "" {
			t.Errorf("kind %s: the read patch does not make the live job again:\n%s", k.Name, diff)
		}
		if gaps := k.Unexpressed(live, again); len(gaps) > 0 {
			t.Errorf("kind %s: the read patch leaves gaps %v", k.Name, gaps)
		}
		words := map[string]string{role: "# fetched by hand\nspec:\n  initContainers:\n  - {name: fetch, image: busybox}\n"}
		if got := k.ReadPodPatches(live, bare, words); got[role] != words[role] {
			t.Errorf("kind %s: the configuration's words are not kept: %q", k.Name, got[role])
		}
		if got := k.ReadPodPatches(live, bare, map[string]string{role: "spec:\n  hostIPC: true\n"}); got[role] == "spec:\n  hostIPC: true\n" {
			t.Errorf("kind %s: a patch that no longer makes the live job is kept", k.Name)
		}
	}
}

// Labels and annotations others write into a pod template (Kueue's on a queued job) are the
// labels and annotations attributes' business, not a patch.
func TestReadPodPatchesLeavesTheTemplatesMetadataToTheLabelsAndAnnotations(t *testing.T) {
	bare, _, err := arenaSSDSpec().Build()
	if err != nil {
		t.Fatal(err)
	}
	live := bare.DeepCopy()
	worker := MPI.templates(live)["worker"]
	if err := unstructured.SetNestedField(worker, map[string]any{"kueue.x-k8s.io/podset": "worker"}, "metadata", "labels"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(worker, map[string]any{"kueue.x-k8s.io/workload": "w"}, "metadata", "annotations"); err != nil {
		t.Fatal(err)
	}
	if got := MPI.ReadPodPatches(live, bare, nil); got != nil {
		t.Errorf("Kueue's template labels read as a patch: %v", got)
	}
}

// An elastic job's etcd takes the tolerations read from its workers: a toleration added to the
// workers by hand is a change of the tolerations, which the rebuilt etcd then has and the live
// one lacks; that is no patch of the etcd.
func TestReadPodPatchesTakesNoListThatOnlyLacksWhatTheRebuildSets(t *testing.T) {
	spec := seedElasticSpec()
	spec.Pod.Tolerations = []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}}
	built, _, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	live := built.DeepCopy()
	if err := applyPodPatches(Elastic, live, map[string]string{"worker": "spec:\n  tolerations:\n    - {key: gpu_node, operator: Exists}\n    - {key: extra, operator: Exists}\n"}); err != nil {
		t.Fatal(err)
	}
	read, err := ReadElasticJob(live)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, _, err := read.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := Elastic.ReadPodPatches(live, rebuilt, nil); got != nil {
		t.Errorf("the etcd lacking the workers' new toleration reads as a patch: %v", got)
	}
}

// Tolerations in another order (a refresh reads strings before blocks) are no patch; a command
// in another order is.
func TestReadPodPatchesTakesTolerationsAsASetAndCommandsInOrder(t *testing.T) {
	a := map[string]any{"spec": map[string]any{
		"tolerations": []any{map[string]any{"key": "a"}, map[string]any{"key": "b"}},
		"containers":  []any{map[string]any{"name": "c", "args": []any{"x", "y"}}},
	}}
	b := map[string]any{"spec": map[string]any{
		"tolerations": []any{map[string]any{"key": "b"}, map[string]any{"key": "a"}},
		"containers":  []any{map[string]any{"name": "c", "args": []any{"y", "x"}}},
	}}
	if got := difference(a, b); got != `{"spec":{"containers":[{"args":["y","x"],"name":"c"}]}}` {
		t.Errorf("difference = %s", got)
	}
}

// An emptyDir volume is written {}: the patch read keeps it (an import once dropped it, and the
// volume with it).
func TestReadPodPatchesKeepsAnEmptyDirsEmptyObject(t *testing.T) {
	a := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "node"}}}}
	b := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "node"}},
		"volumes": []any{map[string]any{"name": "logs", "emptyDir": map[string]any{}}}}}
	if got := difference(a, b); got != `{"spec":{"volumes":[{"emptyDir":{},"name":"logs"}]}}` {
		t.Errorf("difference = %s", got)
	}
}
