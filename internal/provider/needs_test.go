package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// What a job needs that the same apply makes beside it, without a reference Terraform could order
// the job by, is waited for: the operator of its kind (a helm_release installing mpi-operator,
// whose API appears while the job's create waits) and its LocalQueue (made a moment later by
// another module). The plan says that its checks wait for the apply instead of failing, and the
// apply makes both jobs, queued and unqueued.
func TestAccNeeds_whatTheSameApplyMakesIsWaitedFor(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	// mpi-operator is not installed yet: the cluster serves nothing of kubeflow.org.
	proxy, kubeconfig := startProxy(t, apiproxy.Options{Hide: []string{"kubeflow.org/v2beta1", "kubeflow.org/v1"}})
	prefix := acctest.RandomWithPrefix("tf-acc-needs")
	mpi, train, late := prefix+"-mpi", prefix+"-train", prefix+"-late"
	config := strings.Replace(quotaConfig(prefix, 2, ""), providerConfig(), fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig), 1) +
		mpiJobBlock("mpi", mpi, "  tolerations  = [\"node-role.kubernetes.io/control-plane\"]\n") + fmt.Sprintf(`
resource "training_train_job" "queued" {
  name       = %q
  image      = "registry.example/train:1"
  command    = ["torchrun", "train.py"]
  runtime    = "torch-distributed"
  num_nodes  = 2
  gpus       = 1
  queue_name = %q
}
`, train, late)
	w := newWorkspace(t)
	w.write(config)
	ctx := context.Background()
	localQueues := a.dyn.Resource(kueue.LocalQueueGVR).Namespace("default")
	t.Cleanup(func() {
		proxy.SetHide()
		w.run("destroy", "-auto-approve", "-input=false")
		_ = localQueues.Delete(ctx, late, metav1.DeleteOptions{})
		namedJobsGone(t, a, jobs.MPI, mpi)
		namedJobsGone(t, a, jobs.Train, train)
	})

	plan := flat(w.run("plan", "-input=false"))
	for _, want := range []string{
		"Warning: The cluster does not serve mpijobs.kubeflow.org yet",
		"If this apply installs it, the create waits up to 60 seconds for it",
		"there is no LocalQueue default/" + late + " yet. If this apply makes it, the create waits up to 60 seconds for it",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, "Error:") {
		t.Fatalf("the plan failed:\n%s", plan)
	}

	apply := w.start("apply", "-auto-approve", "-input=false")
	// What the rest of the apply makes, while the jobs' creates wait for it.
	if over, err := apply.ended(8 * time.Second); over {
		t.Fatalf("the apply ended (%v) before mpi-operator was installed:\n%s", err, apply.out)
	}
	proxy.SetHide()
	queue, err := kueue.LocalQueueSpec{Name: late, Namespace: "default", ClusterQueue: prefix + "-team"}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localQueues.Create(ctx, queue, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := apply.wait(t, 4*time.Minute, "the apply"); err != nil {
		t.Fatalf("the apply failed: %v\n%s", err, apply.out)
	}
	if _, err := a.get(jobs.MPI.GVR, "default", mpi); err != nil {
		t.Errorf("the MPIJob: %v", err)
	}
	if wl := a.workloadOf(jobs.Train, train); wl == nil {
		t.Errorf("Kueue made no Workload of the TrainJob in its LocalQueue")
	}
	w.planIsEmpty()
}
