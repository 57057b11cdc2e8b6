package jobs

import corev1 "k8s.io/api/core/v1"

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
