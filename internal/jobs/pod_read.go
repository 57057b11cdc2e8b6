package jobs

import corev1 "k8s.io/api/core/v1"

// readPodOptions recovers the shared options from a role's pod template (for import).
func readPodOptions(t corev1.PodTemplateSpec) PodOptions {
	var o PodOptions
	o.NodeSelector = t.Spec.NodeSelector
	o.Tolerations = t.Spec.Tolerations
	o.PriorityClassName = t.Spec.PriorityClassName
	o.ServiceAccountName = t.Spec.ServiceAccountName
	for _, s := range t.Spec.ImagePullSecrets {
		o.ImagePullSecrets = append(o.ImagePullSecrets, s.Name)
	}
	o.Annotations = t.Annotations
	o.SchedulerName = t.Spec.SchedulerName
	o.HostNetwork, o.HostIPC = t.Spec.HostNetwork, t.Spec.HostIPC
	o.TerminationGracePeriod = t.Spec.TerminationGracePeriodSeconds
	if len(t.Spec.Containers) == 0 {
		return o
	}
	c := t.Spec.Containers[0]
	o.Security = readSecurity(t.Spec.SecurityContext, c.SecurityContext)
	o.Image = c.Image
	o.ImagePullPolicy = c.ImagePullPolicy
	hidden := !requestsGPU(c.Resources)
	for _, e := range c.Env {
		switch {
		case hidden && e.Name == NvidiaVisibleDevices && e.Value == NoGPUs:
			// podTemplate's, not the user's
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			if o.SecretEnv == nil {
				o.SecretEnv = map[string]SecretKey{}
			}
			o.SecretEnv[e.Name] = SecretKey{Secret: e.ValueFrom.SecretKeyRef.Name, Key: e.ValueFrom.SecretKeyRef.Key}
		case e.ValueFrom == nil:
			if o.Env == nil {
				o.Env = map[string]string{}
			}
			o.Env[e.Name] = e.Value
		}
	}
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil {
			o.EnvFromSecrets = append(o.EnvFromSecrets, from.SecretRef.Name)
		}
	}
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		if _, limited := c.Resources.Limits[corev1.ResourceCPU]; !limited {
			o.CPU, o.NoCPULimit = q.String(), true
		}
	}
	for name, q := range c.Resources.Limits {
		switch name {
		case corev1.ResourceCPU:
			o.CPU = q.String()
		case corev1.ResourceMemory:
			o.Memory = q.String()
		default:
			if o.ExtendedResources == nil {
				o.ExtendedResources = map[string]string{}
			}
			o.ExtendedResources[string(name)] = q.String()
		}
	}
	o.TakeGPUs(gpuResourceOf(o.ExtendedResources))
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, v := range t.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			o.DataVolumes = append(o.DataVolumes, DataVolume{Claim: v.PersistentVolumeClaim.ClaimName, MountPath: mounts[v.Name]})
		case v.Name == shmVolumeName && v.EmptyDir != nil:
			o.MountShm = true
			if v.EmptyDir.SizeLimit != nil {
				o.ShmSize = v.EmptyDir.SizeLimit.String()
			}
		}
	}
	return o
}
