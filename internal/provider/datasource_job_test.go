package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A job created outside Terraform, read like `arena get`: what the data source says matches
// what the API says of its pods.
func TestAccJobDataSource_matchesAPI(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-get")
	ssd, err := jobs.ParseToleration("ssd_node")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := jobs.NewMPIJob(jobs.MPIJobSpec{Name: name, Namespace: "default", Workers: 2, LauncherCommand: []string{"mpirun", "true"},
		Pod: jobs.PodOptions{Image: "horovod", PriorityClassName: "system-cluster-critical", Tolerations: []corev1.Toleration{ssd}}})
	if err != nil {
		t.Fatal(err)
	}
	// A job with no priority class and no queue: both read as null, never as a word for none.
	plain, err := jobs.NewMPIJob(jobs.MPIJobSpec{Name: name + "-plain", Namespace: "default", Workers: 1, LauncherCommand: []string{"mpirun", "true"},
		Pod: jobs.PodOptions{Image: "horovod", Tolerations: []corev1.Toleration{ssd}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*unstructured.Unstructured{obj, plain} {
		if _, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
		})
	}
	running := a.waitPods(jobs.MPI.PodSelector(name), func(pods []corev1.Pod) bool {
		n := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		return n == 3
	})
	if running != nil {
		t.Fatal(running)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig() + fmt.Sprintf(`
data "training_job" "get" {
  kind = "mpi"
  name = %[1]q
}

data "training_job" "plain" {
  kind = "mpi"
  name = "%[1]s-plain"
}
`, name),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.training_job.get", "status", jobs.Running),
				resource.TestCheckResourceAttr("data.training_job.get", "priority", "system-cluster-critical"),
				resource.TestCheckNoResourceAttr("data.training_job.plain", "priority"),
				resource.TestCheckNoResourceAttr("data.training_job.plain", "queue_name"),
				resource.TestCheckResourceAttr("data.training_job.get", "namespace", "default"),
				resource.TestCheckResourceAttr("data.training_job.get", "instances.#", "3"),
				func(s *terraform.State) error {
					attrs := s.RootModule().Resources["data.training_job.get"].Primary.Attributes
					nodes := map[string]string{}
					for _, p := range a.pods("default", jobs.MPI.PodSelector(name)) {
						nodes[p.Name] = p.Spec.NodeName
					}
					for i := 0; i < 3; i++ {
						pod, node := attrs[fmt.Sprintf("instances.%d.name", i)], attrs[fmt.Sprintf("instances.%d.node", i)]
						if nodes[pod] != node || node != ssdNode {
							return fmt.Errorf("instance %s on %q; the API says %q", pod, node, nodes[pod])
						}
						if attrs[fmt.Sprintf("instances.%d.age", i)] == "" {
							return fmt.Errorf("instance %s has no age", pod)
						}
					}
					return nil
				},
			),
		}},
	})
}
