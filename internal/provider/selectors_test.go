package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// The provider's waits and refreshes select on the server what they read of a shared namespace:
// every LIST and WATCH of pods carries a label selector that a pod of another team does not
// match and the jobs' own pods do, and every one of events a field selector by the job's kind,
// through apply (waits until running), a plan (refresh) and destroy (waits until gone). Before,
// the waits listed and watched every pod of the namespace.
func TestAccSelectors_waitsAndRefreshesNeverListOrWatchPodsOfOthers(t *testing.T) {
	a := newAPI(t)
	ns := a.namespace("tf-acc-sel", nil)
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "another-teams", Labels: map[string]string{"app": "notebook"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/notebook:1"}}}}
	if _, err := a.kube.CoreV1().Pods(ns).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	proxy, kubeconfig := startProxy(t, apiproxy.Options{})
	prefix := "sel" + acctest.RandStringFromCharSet(5, acctest.CharSetAlphaNum)
	config := fmt.Sprintf(`
provider "training" {
  config_path = %[1]q
}

resource "training_tf_job" "test" {
  name         = "%[2]s-tf"
  namespace    = %[3]q
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 2
  tolerations  = ["all"]
}

resource "training_mpi_job" "test" {
  name         = "%[2]s-mpi"
  namespace    = %[3]q
  image        = "registry.example/horovod:0.28.1"
  command      = ["mpirun", "python", "/train.py"]
  worker_count = 1
  tolerations  = ["all"]
}
`, kubeconfig, prefix, ns)
	var jobPods []corev1.Pod
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := checkJobsGone(a)(s); err != nil {
				return err
			}
			return checkSelectedReads(proxy.Reads(), other, jobPods)
		},
		Steps: []resource.TestStep{
			{
				PreConfig: proxy.ResetCounts,
				Config:    config,
				Check: func(*terraform.State) error {
					jobPods = append(a.pods(ns, jobs.TF.PodSelector(prefix+"-tf")), a.pods(ns, jobs.MPI.PodSelector(prefix+"-mpi"))...)
					if len(jobPods) != 4 {
						return fmt.Errorf("%d pods of the jobs, want 4", len(jobPods))
					}
					return nil
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// checkSelectedReads checks every LIST and WATCH of pods and events the proxy saw (see the test
// above).
func checkSelectedReads(reads []apiproxy.Read, other *corev1.Pod, jobPods []corev1.Pod) error {
	var pods, events int
	for _, r := range reads {
		switch {
		case strings.HasSuffix(r.Path, "/pods"):
			pods++
			selector, err := labels.Parse(r.LabelSelector)
			if err != nil {
				return err
			}
			if r.LabelSelector == "" || selector.Matches(labels.Set(other.Labels)) {
				return fmt.Errorf("%s %s with label selector %q reads pods that are not a training job's", r.Verb, r.Path, r.LabelSelector)
			}
		case strings.HasSuffix(r.Path, "/events"):
			events++
			if !strings.Contains(r.FieldSelector, "involvedObject.kind=") {
				return fmt.Errorf("%s %s with field selector %q reads events about every object", r.Verb, r.Path, r.FieldSelector)
			}
		}
	}
	// Each job's pods are among what some read of pods selects.
	for _, p := range jobPods {
		found := false
		for _, r := range reads {
			if s, err := labels.Parse(r.LabelSelector); err == nil && strings.HasSuffix(r.Path, "/pods") && s.Matches(labels.Set(p.Labels)) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("no read of pods selects the job's pod %s", p.Name)
		}
	}
	if pods == 0 || events == 0 {
		return fmt.Errorf("%d reads of pods and %d of events: the waits read neither?", pods, events)
	}
	return nil
}
