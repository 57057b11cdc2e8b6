package jobs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Accelerators counts the accelerators the pods of a job object hold: the units of resource
// their containers' limits ask for, every role's times its pods (a TrainJob's, whose pods are its
// runtime's: its resources per node times its nodes). Without a resource ("") it is the one the
// limits name for GPUs, or the only extended resource they have (gpuResourceOf); 0 when neither
// says.
func (k *Kind) Accelerators(obj *unstructured.Unstructured, resource string) int64 {
	roles, err := k.roles(obj, nil)
	if err != nil {
		roles = trainJobNodes(obj)
	}
	if resource == "" {
		extended := map[string]string{}
		for _, r := range roles {
			for _, c := range r.Template.Spec.Containers {
				for name, q := range c.Resources.Limits {
					if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
						extended[string(name)] = q.String()
					}
				}
			}
		}
		resource = gpuResourceOf(extended)
	}
	return Accelerators(roles, resource)
}

// trainJobNodes are a TrainJob's nodes as its own object says them, without its runtime: its
// trainer's resources per node on each of its nodes; none for another object.
func trainJobNodes(obj *unstructured.Unstructured) []RolePods {
	var tj trainJob
	if obj.GetKind() != Train.Object || fromUnstructured(obj, &tj) != nil || tj.Spec.Trainer == nil || tj.Spec.Trainer.ResourcesPerNode == nil {
		return nil
	}
	tr := tj.Spec.Trainer
	return []RolePods{{Role: TrainerNode, Count: int(ptr.Deref(tr.NumNodes, 1)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: TrainerNode, Resources: *tr.ResourcesPerNode}}}}}}
}

// Accelerators counts the accelerators the pods of roles hold: the units of resource (the job's
// GPU resource: nvidia.com/gpu, a MIG slice, amd.com/gpu, google.com/tpu, aws.amazon.com/neuron)
// their containers' limits ask for, times each role's pods.
func Accelerators(roles []RolePods, resource string) int64 {
	var n int64
	for _, r := range roles {
		for _, c := range r.Template.Spec.Containers {
			if q, ok := c.Resources.Limits[corev1.ResourceName(resource)]; ok {
				n += int64(r.Count) * q.Value()
			}
		}
	}
	return n
}

// AcceleratorHours are n accelerators held for hours, to the hundredth.
func AcceleratorHours(n int64, hours float64) float64 {
	return float64(int64(float64(n)*hours*100+0.5)) / 100
}
