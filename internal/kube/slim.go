package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a refresh or a wait keeps of the objects it lists or watches beside the jobs: only what
// it reads, since a namespace's pods and events are the bulk of what it holds.

// slimEvent keeps of an event what a wait reads: its object, type, reason and message.
func slimEvent(obj any) (any, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: e.Name, Namespace: e.Namespace, ResourceVersion: e.ResourceVersion},
		InvolvedObject: corev1.ObjectReference{Kind: e.InvolvedObject.Kind, Name: e.InvolvedObject.Name, UID: e.InvolvedObject.UID},
		Type:           e.Type, Reason: e.Reason, Message: e.Message,
	}, nil
}

// slimPod keeps of a pod what a refresh or a wait reads: its name, labels, owners and times,
// its node and pull Secrets' names, and its status (phase, conditions, each container's state). Its spec (containers,
// environment, volumes) is its job's template's, which the reads take from the job, and the
// pods of a kind's jobs are the bulk of what a refresh or a wait holds: a refresh of 1,000 jobs
// held 2,000 whole pods.
func slimPod(p *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Labels: p.Labels, OwnerReferences: p.OwnerReferences,
			CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{NodeName: p.Spec.NodeName, ImagePullSecrets: p.Spec.ImagePullSecrets},
		Status: corev1.PodStatus{
			Phase: p.Status.Phase, Conditions: p.Status.Conditions, Reason: p.Status.Reason, Message: p.Status.Message,
			StartTime:             p.Status.StartTime,
			InitContainerStatuses: slimContainerStatuses(p.Status.InitContainerStatuses),
			ContainerStatuses:     slimContainerStatuses(p.Status.ContainerStatuses),
		},
	}
}

// slimContainerStatuses keeps of each status the container's name, state and restarts.
func slimContainerStatuses(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	if statuses == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(statuses))
	for i, c := range statuses {
		out[i] = corev1.ContainerStatus{Name: c.Name, State: c.State, LastTerminationState: c.LastTerminationState,
			Ready: c.Ready, Started: c.Started, RestartCount: c.RestartCount}
	}
	return out
}

// slimMetadata keeps of an object's metadata what the wait on what a job owns reads: its name,
// UID and owners, and whether it is being deleted. A destroy of 1,000 jobs watches the metadata
// of every pod, Service, ConfigMap and Job of the namespace, whose labels, annotations and
// finalizers it never reads.
func slimMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return dropManagedFields(obj)
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta: m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
			OwnerReferences: m.OwnerReferences, DeletionTimestamp: m.DeletionTimestamp,
		},
	}, nil
}
