package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// The seed's job, on the local cluster's GPU nodes.
func elasticJobConfig(name string, workers int, extra string) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_elastic_job" "test" {
  name         = %[1]q
  image        = "torchelastic/examples:0.2.0"
  script       = "/workspace/examples/imagenet/main.py"
  script_args  = ["--arch=resnet18", "--batch-size=32", "--epochs=2", "/workspace/data/tiny-imagenet-200"]
  worker_count = %[2]d
  elastic  = { min_workers = 1, max_workers = 4 }
  gpus         = 1
  tolerations  = ["gpu_node"]
  # Every node of the local cluster is tainted: the etcd, a CPU helper, is told where it may go.
  roles        = { etcd = { tolerations = ["gpu_node"] } }
%[3]s
}
`, name, workers, extra)
}

// Framework names allow no hyphen.
func elasticJobName() string { return strings.ReplaceAll(acctest.RandomWithPrefix("tfacc"), "-", "") }

// checkElasticPods checks in the API: one etcd pod and exactly workers worker pods, all Running
// on the tolerated nodes, and no other pod of the job.
func checkElasticPods(a *api, name string, workers int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return a.waitPods(jobs.Elastic.PodSelector(name), func(pods []corev1.Pod) bool {
			etcd, w := 0, 0
			for _, p := range pods {
				if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || !gpuNodes[p.Spec.NodeName] {
					return false
				}
				switch p.Labels[jobs.TaskRoleLabel] {
				case jobs.EtcdRole:
					etcd++
				case jobs.WorkerRole:
					w++
				}
			}
			return etcd == 1 && w == workers
		})
	}
}

func checkElasticServices(a *api, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		etcd, err := a.kube.CoreV1().Services("default").Get(ctx, name+"-etcd", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if etcd.Spec.Selector[jobs.TaskRoleLabel] != jobs.EtcdRole || len(etcd.Spec.Ports) != 1 || etcd.Spec.Ports[0].Port != 2379 {
			return fmt.Errorf("etcd Service: selector %v ports %v", etcd.Spec.Selector, etcd.Spec.Ports)
		}
		worker, err := a.kube.CoreV1().Services("default").Get(ctx, name+"-worker", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if worker.Spec.ClusterIP != corev1.ClusterIPNone || !worker.Spec.PublishNotReadyAddresses || worker.Spec.Selector[jobs.FrameworkNameLabel] != name {
			return fmt.Errorf("worker Service: clusterIP %q publishNotReady %v selector %v", worker.Spec.ClusterIP, worker.Spec.PublishNotReadyAddresses, worker.Spec.Selector)
		}
		for _, svc := range []*corev1.Service{etcd, worker} {
			if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].Kind != "Framework" || svc.OwnerReferences[0].Name != name {
				return fmt.Errorf("Service %s is not owned by the Framework: %v", svc.Name, svc.OwnerReferences)
			}
		}
		return nil
	}
}

func TestAccElasticJob_seedLifecycle(t *testing.T) {
	a := newAPI(t)
	name := elasticJobName()
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("training_elastic_job.test", plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: elasticJobConfig(name, 4, ""),
				Check:  resource.ComposeAggregateTestCheckFunc(checkElasticPods(a, name, 4), checkElasticServices(a, name)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_elastic_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					statecheck.ExpectKnownValue("training_elastic_job.test", tfjsonpath.New("instances"), knownvalue.ListSizeExact(5)),
					statecheck.ExpectKnownValue("training_elastic_job.test", tfjsonpath.New("processes_per_worker"), knownvalue.Int64Exact(1)),
				},
			},
			// The seed's scale down 4 -> 2, then up 2 -> 3, in place.
			{Config: elasticJobConfig(name, 2, ""), ConfigPlanChecks: update, Check: checkElasticPods(a, name, 2)},
			{Config: elasticJobConfig(name, 3, ""), ConfigPlanChecks: update, Check: checkElasticPods(a, name, 3)},
			{
				ResourceName:            "training_elastic_job.test",
				ImportState:             true,
				ImportStateId:           "default/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts"},
			},
			{
				// Every worker's training returns 0: FrameworkController completes the job.
				PreConfig: func() {
					a.finishPods(jobs.Elastic.PodSelector(name) + "," + jobs.TaskRoleLabel + "=" + jobs.WorkerRole)
					err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
						obj, err := a.get(jobs.Elastic.GVR, "default", name)
						if err != nil {
							return false, err
						}
						s, err := jobs.Elastic.Status(jobs.Observed{Object: obj}, time.Now())
						return err == nil && s.Phase == jobs.Succeeded, err
					})
					if err != nil {
						t.Fatalf("the Framework did not complete: %v", err)
					}
				},
				RefreshState: true,
				Check:        resource.TestCheckResourceAttr("training_elastic_job.test", "status", jobs.Succeeded),
			},
			{
				// Changing the bounds cannot apply to running workers: the plan replaces the job.
				Config:   strings.Replace(elasticJobConfig(name, 3, ""), "max_workers = 4", "max_workers = 5", 1),
				PlanOnly: true, ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_elastic_job.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
		},
	})
}

// Destroying a running job removes the Framework, both Services and every pod, the etcd's
// included, and waits for them (CheckDestroy looks right after destroy returns).
func TestAccElasticJob_destroyWhileRunning(t *testing.T) {
	a := newAPI(t)
	name := elasticJobName()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{{
			Config: elasticJobConfig(name, 2, `  shm_size = "2Gi"`),
			Check:  resource.ComposeAggregateTestCheckFunc(checkElasticPods(a, name, 2), checkElasticServices(a, name)),
		}},
	})
}
