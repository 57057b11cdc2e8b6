package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// Events outlive their object by about an hour: a Warning that mpi-operator left about an
// earlier job of the same name (here a ValidationError, which fails a wait at once) must not
// fail the create of a new one. The event names the earlier object's UID, as an operator's does.
func TestAccMPIJob_staleEventOfAnEarlierJobDoesNotFailACreate(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	name := mpiJobName()
	event := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name + ".stale", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{APIVersion: jobs.MPI.GVR.GroupVersion().String(), Kind: jobs.MPI.Object,
			Namespace: "default", Name: name, UID: "00000000-0000-0000-0000-0000000000e1"},
		Type: corev1.EventTypeWarning, Reason: "ValidationError", Message: "MPIJob default/" + name + " is invalid: an earlier job's fault",
		Source: corev1.EventSource{Component: "mpi-operator"}, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
	}
	if _, err := a.kube.CoreV1().Events("default").Create(ctx, event, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.kube.CoreV1().Events("default").Delete(ctx, event.Name, metav1.DeleteOptions{}) })
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{{
			Config: mpiJobConfig(name, 1, `  tolerations = ["ssd_node"]`),
			Check:  resource.TestCheckResourceAttr("training_mpi_job.test", "status", jobs.Running),
		}},
	})
}
