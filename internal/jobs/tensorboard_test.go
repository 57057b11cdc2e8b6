package jobs

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestNewTensorBoard(t *testing.T) {
	ssd, _ := ParseToleration("ssd_node")
	pod := PodOptions{Image: "horovod", GPUs: 1, Tolerations: []corev1.Toleration{ssd}, DataVolumes: []DataVolume{{Claim: "logs", MountPath: "/training_logs"}}}
	owner := metav1.OwnerReference{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob", Name: "mpi-dist", UID: "u1"}
	d, s, err := NewTensorBoard("mpi-dist", "default", TensorBoardSpec{LogDir: "/training_logs"}, pod, owner)
	if err != nil {
		t.Fatal(err)
	}
	if d.GetName() != "mpi-dist-tensorboard" || s.GetName() != "mpi-dist-tensorboard" || d.GetOwnerReferences()[0].UID != "u1" {
		t.Errorf("names %s %s owners %v", d.GetName(), s.GetName(), d.GetOwnerReferences())
	}
	var dep appsv1.Deployment
	if err := fromUnstructured(d, &dep); err != nil {
		t.Fatal(err)
	}
	spec := dep.Spec.Template.Spec
	c := spec.Containers[0]
	if c.Image != DefaultTensorBoardImage || c.Command[2] != "/training_logs" {
		t.Errorf("container %v", c)
	}
	if len(c.Resources.Limits) != 0 {
		t.Error("TensorBoard must not take the job's GPUs")
	}
	if got := visibleDevices(c.Env); got != NoGPUs {
		t.Errorf("TensorBoard %s=%q, want %q: it would see every GPU of a GPU node", NvidiaVisibleDevices, got, NoGPUs)
	}
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "ssd_node" {
		t.Errorf("tolerations %v, want the job's", spec.Tolerations)
	}
	if len(spec.Volumes) != 1 || spec.Volumes[0].PersistentVolumeClaim.ClaimName != "logs" {
		t.Errorf("volumes %v, want the job's data volumes", spec.Volumes)
	}
	if got := TensorBoardURL(s, ""); got != "http://mpi-dist-tensorboard.default.svc:6006" {
		t.Errorf("in-cluster URL %s", got)
	}
	if err := unstructured.SetNestedSlice(s.Object, []any{map[string]any{"port": int64(6006), "nodePort": int64(30052)}}, "spec", "ports"); err != nil {
		t.Fatal(err)
	}
	if got := TensorBoardURL(s, "192.168.3.225"); got != "http://192.168.3.225:30052" {
		t.Errorf("node port URL %s", got)
	}
}
