package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SharedVolume makes a PersistentVolume of a folder of this machine (the real node's host) and a
// PersistentVolumeClaim of the same name bound to it, in namespace: storage every pod of a job
// on the real node shares, such as a checkpoint folder. Made again with the same arguments, it
// changes nothing. The PersistentVolume is retained when the claim goes; DeleteSharedVolume
// removes both.
func SharedVolume(ctx context.Context, kubeconfig, namespace, name, dir string) error {
	c, err := newClients(kubeconfig)
	if err != nil {
		return err
	}
	capacity := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      capacity,
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
		},
	}
	if _, err := c.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the PersistentVolume of %s: %w", dir, err)
	}
	noClass := ""
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &noClass,
			VolumeName:       pv.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: capacity},
		},
	}
	if _, err := c.kube.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the PersistentVolumeClaim %s/%s: %w", namespace, name, err)
	}
	return nil
}

// DeleteSharedVolume removes what SharedVolume made (the folder stays).
func DeleteSharedVolume(ctx context.Context, kubeconfig, namespace, name string) error {
	c, err := newClients(kubeconfig)
	if err != nil {
		return err
	}
	if err := c.kube.CoreV1().PersistentVolumeClaims(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return c.kube.CoreV1().PersistentVolumes().Delete(ctx, namespace+"-"+name, metav1.DeleteOptions{})
}
