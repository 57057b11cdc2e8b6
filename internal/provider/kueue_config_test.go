package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// otherKueueConfig is held to read (shared) or take away (alone) the configuration of the
// cluster clustertest.KueueOtherwise starts.
var otherKueueConfig sync.RWMutex

// On a cluster whose Kueue is configured as Kueue v0.19's default manifests configure it (no
// Kubeflow training-operator integrations) and that leaves a resource prefix out of quota, the
// provider answers as that Kueue does. Where it can read Kueue's configuration: a queued
// PyTorchJob fails its plan, naming the integration to enable, and an MPIJob asking for an
// excluded resource its ClusterQueue does not cover plans and is admitted (on a cluster of
// Kueue's defaults that plan fails: Kueue would never admit it). Where it cannot (the ConfigMap
// gone), the same queued PyTorchJob plans, and its apply fails within seconds, naming the
// integration: Kueue neither suspended it nor made it a Workload, so it ran outside every quota.
func TestAccKueue_asTheClusterConfiguresIt(t *testing.T) {
	newAPI(t) // an acceptance test: skipped outside its lanes
	t.Parallel()
	kubeconfig, err := clustertest.KueueOtherwise()
	if err != nil {
		t.Fatal(err)
	}
	other := newAPIAt(t, kubeconfig)
	prefix := acctest.RandomWithPrefix("tf-acc-kcfg")
	provider := fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig)
	queues := strings.Replace(quotaConfig(prefix, 4, ""), providerConfig(), provider, 1)
	pytorch := fmt.Sprintf(`
resource "training_pytorch_job" "unmanaged" {
  name         = "%[1]s-pt"
  image        = "registry.example/train:1"
  command      = ["torchrun", "train.py"]
  worker_count = 1
  gpus         = 1
  queue_name   = training_local_queue.team.name
  wait_for     = "admitted"
}
`, prefix)
	fpga := fmt.Sprintf(`
resource "training_mpi_job" "excluded" {
  name               = "%[1]s-mpi"
  image              = "registry.example/train:1"
  command            = ["mpirun", "hostname"]
  worker_count       = 1
  gpus               = 1
  extended_resources = { "example.com/fpga" = "1" }
  tolerations        = ["node-role.kubernetes.io/control-plane"]
  queue_name         = training_local_queue.team.name
  wait_for           = "admitted"
  timeouts {
    create = "1m"
  }
}
`, prefix)
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.write(queues)
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, other, jobs.PyTorch, prefix+"-pt")
		namedJobsGone(t, other, jobs.MPI, prefix+"-mpi")
	})
	w.write(queues)
	w.run("apply", "-auto-approve", "-input=false")

	// Kueue's configuration read: certain answers at plan.
	w.write(queues + pytorch)
	out, err := w.try(nil, "plan", "-input=false")
	if err == nil || !wrapped(`Kueue does not manage PyTorchJobs on this cluster.*runs the integrations kubeflow\.org/mpijob, trainer\.kubeflow\.org/trainjob, not kubeflow\.org/pytorchjob`).MatchString(out) {
		t.Errorf("the plan of a queued PyTorchJob on a Kueue that does not manage them did not fail naming the integration (%v):\n%s", err, out)
	}
	w.write(queues + fpga)
	w.run("apply", "-auto-approve", "-input=false")
	if wl := other.workloadOf(jobs.MPI, prefix+"-mpi"); wl == nil || !strings.Contains(fmt.Sprint(wl.Object["status"]), "QuotaReserved") {
		t.Errorf("Kueue did not admit the job whose excluded resource its queue does not cover: %v", wl)
	}

	// Kueue's configuration not readable: the apply finds out, and says so. The ConfigMap is put
	// back after, for the tests that read this Kueue's configuration (otherKueueConfig).
	otherKueueConfig.Lock()
	defer otherKueueConfig.Unlock()
	configMaps := other.kube.CoreV1().ConfigMaps(cluster.KueueNamespace)
	saved, err := configMaps.Get(context.Background(), cluster.KueueConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := configMaps.Delete(context.Background(), cluster.KueueConfigMap, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		back := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: saved.Name, Namespace: saved.Namespace}, Data: saved.Data}
		if _, err := configMaps.Create(context.Background(), back, metav1.CreateOptions{}); err != nil {
			t.Errorf("putting Kueue's configuration back: %v", err)
		}
	}()
	w.write(queues + fpga + pytorch)
	started := time.Now()
	apply := w.start("apply", "-auto-approve", "-input=false")
	err = apply.wait(t, 3*time.Minute, "the apply of a queued PyTorchJob that Kueue does not manage")
	if err == nil || !wrapped(`Kueue does not manage PyTorchJobs on this cluster: the job has queue_name .* neither suspended it nor made a Workload.*Enable the integration kubeflow\.org/pytorchjob`).MatchString(apply.out.String()) {
		t.Errorf("the apply did not fail naming the integration (%v, after %s):\n%s", err, time.Since(started).Round(time.Second), apply.out)
	}
}
