package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// Arena's --tensorboard: a Deployment and NodePort Service for the job's logs, placed by its own
// tolerations (not the job's GPU-node ones), and gone with the job; it imports as it was made.
func TestAccMPIJob_tensorBoard(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	tbName := jobs.TensorBoardName(name)
	tbPods := jobs.TensorBoardLabel + "=" + name
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(checkJobsGone(a), func(*terraform.State) error {
			ctx := context.Background()
			if _, err := a.kube.AppsV1().Deployments("default").Get(ctx, tbName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("TensorBoard Deployment left after destroy (err=%v)", err)
			}
			if _, err := a.kube.CoreV1().Services("default").Get(ctx, tbName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("TensorBoard Service left after destroy (err=%v)", err)
			}
			if pods := a.pods("default", tbPods); len(pods) > 0 {
				return fmt.Errorf("%d TensorBoard pods left after destroy", len(pods))
			}
			return nil
		}),
		Steps: []resource.TestStep{{
			Config: mpiJobConfig(name, 1, `  tolerations = ["gpu_node", "ssd_node"]
  tensorboard = {
    log_dir      = "/training_logs"
    service_type = "NodePort"
    tolerations  = ["ssd_node"]
  }`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestMatchResourceAttr("training_mpi_job.test", "tensorboard_url", regexp.MustCompile(`^http://[0-9.]+:3[0-9]{4}$`)),
				func(*terraform.State) error {
					ctx := context.Background()
					d, err := a.kube.AppsV1().Deployments("default").Get(ctx, tbName, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if o := d.OwnerReferences; len(o) != 1 || o[0].Kind != "MPIJob" || o[0].Name != name {
						return fmt.Errorf("TensorBoard Deployment owners %v, want the MPIJob", o)
					}
					if tols := d.Spec.Template.Spec.Tolerations; len(tols) != 1 || tols[0].Key != "ssd_node" {
						return fmt.Errorf("TensorBoard tolerations %v, want its own (ssd_node), not the job's", tols)
					}
					svc, err := a.kube.CoreV1().Services("default").Get(ctx, tbName, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if svc.Spec.Type != corev1.ServiceTypeNodePort {
						return fmt.Errorf("TensorBoard Service type %s, want NodePort", svc.Spec.Type)
					}
					return a.waitPods(tbPods, func(pods []corev1.Pod) bool {
						return len(pods) == 1 && pods[0].Status.Phase == corev1.PodRunning && pods[0].Spec.NodeName == ssdNode
					})
				},
			),
		}, {
			ResourceName: "training_mpi_job.test", ImportState: true, ImportStateId: "default/" + name, ImportStateVerify: true,
			ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
		}},
	})
}
