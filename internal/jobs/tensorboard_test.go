package jobs

import (
	"strings"
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
	// ClusterIP by default: the in-cluster address, whatever nodes there are.
	if typ, _, _ := unstructured.NestedString(s.Object, "spec", "type"); typ != string(corev1.ServiceTypeClusterIP) {
		t.Errorf("Service type %q, want ClusterIP by default", typ)
	}
	if got := TensorBoardURL(s, "192.168.3.225"); got != "http://mpi-dist-tensorboard.default.svc:6006" {
		t.Errorf("in-cluster URL %s", got)
	}
	_, s, err = NewTensorBoard("mpi-dist", "default", TensorBoardSpec{LogDir: "/training_logs", ServiceType: corev1.ServiceTypeNodePort}, pod, owner)
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(s.Object, []any{map[string]any{"port": int64(6006), "nodePort": int64(30052)}}, "spec", "ports"); err != nil {
		t.Fatal(err)
	}
	if got := TensorBoardURL(s, "192.168.3.225"); got != "http://192.168.3.225:30052" {
		t.Errorf("node port URL %s", got)
	}
	if got := TensorBoardURL(s, ""); got != "http://mpi-dist-tensorboard.default.svc:6006" {
		t.Errorf("NodePort without a node address: URL %s, want the in-cluster one", got)
	}
	if tb, ok := ReadTensorBoard(d, s); !ok || tb.ServiceType != corev1.ServiceTypeNodePort || tb.LogDir != "/training_logs" {
		t.Errorf("ReadTensorBoard = %+v, %v", tb, ok)
	}
}

// A NodePort URL names a node that is Ready and schedulable, or says why there is none.
func TestNodeAddress(t *testing.T) {
	node := func(name, ip string, ready, cordoned bool) corev1.Node {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: cordoned},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	}
	if addr, why := NodeAddress([]corev1.Node{node("a", "10.0.0.1", false, false), node("b", "10.0.0.2", true, true), node("c", "10.0.0.3", true, false)}); addr != "10.0.0.3" {
		t.Errorf("NodeAddress = %q (%s), want the Ready, schedulable node's", addr, why)
	}
	if addr, why := NodeAddress([]corev1.Node{node("a", "10.0.0.1", false, false), node("b", "10.0.0.2", true, true)}); addr != "" || !strings.Contains(why, "none of the cluster's 2 nodes") {
		t.Errorf("NodeAddress = %q, %q; want none, with why", addr, why)
	}
}
