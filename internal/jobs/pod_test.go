package jobs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A worker that asks for RDMA devices beside its GPUs (a job made with kubectl for InfiniBand)
// reads as its GPUs and its other extended resources, the same on every read: the GPUs are the
// resource named for GPUs, whichever order the limits come in.
func TestReadPodOptionsTellsTheGPUsFromOtherExtendedResources(t *testing.T) {
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "i",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			"nvidia.com/gpu": resource.MustParse("2"), "rdma/hca": resource.MustParse("1"), "vpc.amazonaws.com/efa": resource.MustParse("4"),
			corev1.ResourceCPU: resource.MustParse("8"),
		}}}}}}
	for range 50 { // the limits are a map: its order changes from read to read
		o := readPodOptions(template)
		if o.GPUs != 2 || o.GPUResource != "nvidia.com/gpu" || o.CPU != "8" {
			t.Fatalf("read %d %s GPUs, cpu %s; want 2 nvidia.com/gpu, cpu 8", o.GPUs, o.GPUResource, o.CPU)
		}
		if len(o.ExtendedResources) != 2 || o.ExtendedResources["rdma/hca"] != "1" || o.ExtendedResources["vpc.amazonaws.com/efa"] != "4" {
			t.Fatalf("extended resources read as %v", o.ExtendedResources)
		}
	}
}

// A worker's extended resources are limits of its container beside its GPUs, and read back; a
// GPU resource of another name than the default is told by the state (TakeGPUs).
func TestWorkerResourcesCarryTheExtendedResources(t *testing.T) {
	o := PodOptions{Image: "i", GPUs: 8, GPUResource: "example.com/accelerator", ExtendedResources: map[string]string{"rdma/hca": "1"}}
	r, err := o.WorkerResources()
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Limits["rdma/hca"]; q.Value() != 1 {
		t.Errorf("rdma/hca limit %s", q.String())
	}
	if q := r.Limits["example.com/accelerator"]; q.Value() != 8 {
		t.Errorf("GPU limit %s", q.String())
	}
	read := readPodOptions(corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "w", Resources: r}}}})
	read.TakeGPUs("example.com/accelerator")
	if read.GPUs != 8 || read.GPUResource != "example.com/accelerator" || len(read.ExtendedResources) != 1 || read.ExtendedResources["rdma/hca"] != "1" {
		t.Errorf("read back as %d %s GPUs and %v", read.GPUs, read.GPUResource, read.ExtendedResources)
	}
	if _, err := (PodOptions{GPUs: 1, ExtendedResources: map[string]string{DefaultGPUResource: "1"}}).WorkerResources(); err == nil {
		t.Error("the GPU resource given twice, as gpus and as an extended resource, was taken")
	}
	if _, err := (PodOptions{ExtendedResources: map[string]string{"rdma/hca": "0.5"}}).WorkerResources(); err == nil {
		t.Error("half an RDMA device was taken")
	}
}
