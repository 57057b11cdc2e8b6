package jobs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// TensorBoard settings, as Arena's --tensorboard and --logdir.
const (
	DefaultTensorBoardImage = "tensorflow/tensorflow:2.15.0"
	TensorBoardPort         = 6006
	// TensorBoardLabel names the job a TensorBoard pod serves.
	TensorBoardLabel = "training.kubetrain.io/tensorboard-for"
)

// TensorBoardSpec is a job's TensorBoard: it reads LogDir from the job's data volumes.
type TensorBoardSpec struct {
	LogDir string
	Image  string
	// ServiceType is ClusterIP (the default: reached inside the cluster, or through kubectl
	// port-forward) or NodePort (on every node's address, as Arena's --tensorboard does).
	ServiceType corev1.ServiceType
	// Volume is the claim it reads the logs from; nil: the job's data volumes that hold LogDir
	// (all of them when none does; see logVolumes).
	Volume *DataVolume
	// Its own placement: a TensorBoard is a CPU helper, placed apart from the job's GPU nodes.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// logVolumes are the claims a TensorBoard mounts: the one it is told, or the job's data volumes
// whose mount path holds logDir, or, when none does, all of them.
func (tb TensorBoardSpec) logVolumes(job []DataVolume) []DataVolume {
	if tb.Volume != nil {
		return []DataVolume{*tb.Volume}
	}
	return holding(tb.LogDir, job)
}

func holding(logDir string, volumes []DataVolume) []DataVolume {
	var out []DataVolume
	for _, v := range volumes {
		if logDir == v.MountPath || strings.HasPrefix(logDir, strings.TrimSuffix(v.MountPath, "/")+"/") {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return volumes
	}
	return out
}

// TensorBoardName is the name of a job's TensorBoard Deployment and Service.
func TensorBoardName(job string) string { return job + "-tensorboard" }

// NewTensorBoard builds the Deployment and Service of a job's TensorBoard. Its pod is a helper
// that no training depends on: it gets no GPU, neither the job's priority class (it would
// preempt other teams' pods for a convenience) nor the job's placement (its GPU nodes), only the
// placement tb gives; it takes the job's image pull settings, labels and annotations, and
// mounts read-only the claims that hold the logs (logVolumes), so that it never holds one for
// writing. owner is the job object, so the TensorBoard is garbage-collected with it.
func NewTensorBoard(job string, namespace string, tb TensorBoardSpec, pod PodOptions, owner metav1.OwnerReference) (deployment, service *unstructured.Unstructured, err error) {
	image := tb.Image
	if image == "" {
		image = DefaultTensorBoardImage
	}
	opts := PodOptions{Image: image, NodeSelector: tb.NodeSelector, Tolerations: tb.Tolerations, ImagePullSecrets: pod.ImagePullSecrets,
		ImagePullPolicy: pod.ImagePullPolicy, Labels: pod.Labels, Annotations: pod.Annotations, DataVolumes: tb.logVolumes(pod.DataVolumes),
		Security: pod.Security}
	template, err := opts.podTemplate(container{
		name:    "tensorboard",
		command: []string{"tensorboard", "--logdir", tb.LogDir, "--host", "0.0.0.0", "--port", fmt.Sprint(TensorBoardPort)},
		ports:   []corev1.ContainerPort{{ContainerPort: TensorBoardPort}},
	}, corev1.RestartPolicyAlways)
	if err != nil {
		return nil, nil, err
	}
	for i := range template.Spec.Volumes {
		if c := template.Spec.Volumes[i].PersistentVolumeClaim; c != nil {
			c.ReadOnly = true
		}
	}
	for i := range template.Spec.Containers[0].VolumeMounts {
		template.Spec.Containers[0].VolumeMounts[i].ReadOnly = true
	}
	selector := map[string]string{TensorBoardLabel: job}
	template.Labels = merge(template.Labels, selector)
	meta := metav1.ObjectMeta{Name: TensorBoardName(job), Namespace: namespace, Labels: jobLabels(selector, "", ""),
		OwnerReferences: []metav1.OwnerReference{owner}}
	d := appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: template,
		},
	}
	s := corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     cmp.Or(tb.ServiceType, corev1.ServiceTypeClusterIP),
			Selector: selector,
			Ports:    []corev1.ServicePort{{Name: "http", Port: TensorBoardPort, TargetPort: intstr.FromInt32(TensorBoardPort)}},
		},
	}
	if deployment, err = toUnstructured(&d); err != nil {
		return nil, nil, err
	}
	if service, err = toUnstructured(&s); err != nil {
		return nil, nil, err
	}
	return deployment, service, nil
}

// TensorBoardURL is where a job's TensorBoard answers: a NodePort Service's node port on a
// node, as `arena get` prints it, or its in-cluster address (a ClusterIP Service, or no node
// address known).
func TensorBoardURL(service *unstructured.Unstructured, nodeAddress string) string {
	ports, _, _ := unstructured.NestedSlice(service.Object, "spec", "ports")
	if serviceType, _, _ := unstructured.NestedString(service.Object, "spec", "type"); serviceType == string(corev1.ServiceTypeNodePort) &&
		len(ports) > 0 && nodeAddress != "" {
		if m, ok := ports[0].(map[string]any); ok {
			if nodePort, ok := m["nodePort"].(int64); ok {
				return fmt.Sprintf("http://%s:%d", nodeAddress, nodePort)
			}
		}
	}
	return fmt.Sprintf("http://%s.%s.svc:%d", service.GetName(), service.GetNamespace(), TensorBoardPort)
}

// ReadTensorBoard recovers a TensorBoard's spec from its Deployment and Service (refresh and
// import), the job's data volumes telling whether its claim is the default one; ok is false
// when the Deployment is not one NewTensorBoard makes.
func ReadTensorBoard(deployment, service *unstructured.Unstructured, jobVolumes []DataVolume) (tb TensorBoardSpec, ok bool) {
	serviceType, _, _ := unstructured.NestedString(service.Object, "spec", "type")
	var d appsv1.Deployment
	if err := fromUnstructured(deployment, &d); err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return tb, false
	}
	c := d.Spec.Template.Spec.Containers[0]
	for i, arg := range c.Command {
		if arg == "--logdir" && i+1 < len(c.Command) {
			tb = TensorBoardSpec{LogDir: c.Command[i+1], Image: c.Image, ServiceType: corev1.ServiceType(serviceType),
				NodeSelector: d.Spec.Template.Spec.NodeSelector, Tolerations: d.Spec.Template.Spec.Tolerations}
			mounted := readPodOptions(d.Spec.Template).DataVolumes
			if len(mounted) == 1 && !slices.Equal(mounted, holding(tb.LogDir, jobVolumes)) {
				tb.Volume = &mounted[0]
			}
			return tb, true
		}
	}
	return tb, false
}

// NodeAddress is the InternalIP of a node that is Ready and schedulable, where a NodePort
// answers, with why there is none ("" and a reason).
func NodeAddress(nodes []corev1.Node) (address, whyNone string) {
	if len(nodes) == 0 {
		return "", "the cluster has no nodes"
	}
	for _, n := range nodes {
		if n.Spec.Unschedulable || !kueue.NodeReady(n) {
			continue
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && a.Address != "" {
				return a.Address, ""
			}
		}
	}
	return "", fmt.Sprintf("none of the cluster's %d nodes is Ready, schedulable and has an InternalIP", len(nodes))
}
