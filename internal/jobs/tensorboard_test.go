package jobs

import (
	"reflect"
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
	if len(spec.Tolerations) != 0 {
		t.Errorf("tolerations %v, want none of the job's: a CPU helper has no business on its GPU nodes", spec.Tolerations)
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
	if tb, ok := ReadTensorBoard(d, s, pod.DataVolumes); !ok || tb.ServiceType != corev1.ServiceTypeNodePort || tb.LogDir != "/training_logs" {
		t.Errorf("ReadTensorBoard = %+v, %v", tb, ok)
	}
}

// The TensorBoard is a CPU helper no training depends on: it takes neither the job's priority
// class (it would preempt other teams' pods) nor its GPU-node tolerations and selector, only the
// placement its own block gives; and it mounts read-only only the claim that holds the logs (or
// the one it is told), so that it never holds a claim for writing that the workers need.
func TestTensorBoardIsACPUHelperThatReadsTheLogsReadOnly(t *testing.T) {
	gpu, _ := ParseToleration("gpu_node")
	ssd, _ := ParseToleration("ssd_node")
	pod := PodOptions{Image: "horovod", GPUs: 1, PriorityClassName: "team-high", Tolerations: []corev1.Toleration{gpu},
		NodeSelector: map[string]string{"accelerator": "a100"},
		DataVolumes:  []DataVolume{{Claim: "data", MountPath: "/data"}, {Claim: "logs", MountPath: "/training_logs"}}}
	owner := metav1.OwnerReference{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob", Name: "j", UID: "u1"}
	for _, tc := range []struct {
		tb    TensorBoardSpec
		claim string
	}{
		{TensorBoardSpec{LogDir: "/training_logs/run-1"}, "logs"},
		{TensorBoardSpec{LogDir: "/training_logs", Volume: &DataVolume{Claim: "logs-ro", MountPath: "/training_logs"},
			Tolerations: []corev1.Toleration{ssd}, NodeSelector: map[string]string{"pool": "cpu"}}, "logs-ro"},
	} {
		d, s, err := NewTensorBoard("j", "default", tc.tb, pod, owner)
		if err != nil {
			t.Fatal(err)
		}
		var dep appsv1.Deployment
		if err := fromUnstructured(d, &dep); err != nil {
			t.Fatal(err)
		}
		spec := dep.Spec.Template.Spec
		if spec.PriorityClassName != "" {
			t.Errorf("%s: priority class %q, want none", tc.claim, spec.PriorityClassName)
		}
		if !reflect.DeepEqual(spec.Tolerations, tc.tb.Tolerations) || !reflect.DeepEqual(spec.NodeSelector, tc.tb.NodeSelector) {
			t.Errorf("%s: placement %v %v, want the block's %v %v", tc.claim, spec.Tolerations, spec.NodeSelector, tc.tb.Tolerations, tc.tb.NodeSelector)
		}
		if len(spec.Volumes) != 1 || spec.Volumes[0].PersistentVolumeClaim.ClaimName != tc.claim || !spec.Volumes[0].PersistentVolumeClaim.ReadOnly {
			t.Errorf("%s: volumes %+v, want the one claim, read-only", tc.claim, spec.Volumes)
		}
		if m := spec.Containers[0].VolumeMounts; len(m) != 1 || !m[0].ReadOnly {
			t.Errorf("%s: mounts %+v, want one, read-only", tc.claim, m)
		}
		back, ok := ReadTensorBoard(d, s, pod.DataVolumes)
		if !ok {
			t.Fatalf("%s: not read back", tc.claim)
		}
		if back.Image == DefaultTensorBoardImage && tc.tb.Image == "" {
			back.Image = ""
		}
		back.ServiceType = tc.tb.ServiceType
		if !reflect.DeepEqual(back, tc.tb) {
			t.Errorf("%s: read back %+v, want %+v", tc.claim, back, tc.tb)
		}
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
