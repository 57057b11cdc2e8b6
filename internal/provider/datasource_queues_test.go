package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// queueData is what the queue data sources' outputs say, as `terraform output -json` gives them.
type queueData struct {
	ClusterQueue string            `json:"cluster_queue"`
	Usage        map[string]string `json:"usage"`
	Quotas       []struct {
		Flavor, Resource string
		Nominal          string `json:"nominal_quota"`
	} `json:"quotas"`
	Workloads []queuedWorkload `json:"workloads"`
	Head      *queuedWorkload  `json:"head"`
}

type queuedWorkload struct {
	Job      string  `json:"job"`
	Admitted bool    `json:"admitted"`
	Reason   *string `json:"reason"`
}

// A team that may not write a queue reads it: with the jobs' role alone, training_local_queue
// lists its workloads in Kueue's order, the admitted job first, and names the job that waits at
// its head with Kueue's reason; with the admission prediction's role alone, training_cluster_queue
// says the same with the ClusterQueue's quotas and usage. Neither identity may change the queues.
func TestAccQueueDataSources_readAQueueTheIdentityMayNotWrite(t *testing.T) {
	a := newAPI(t)
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	only := func(name string) []rbacv1.ClusterRole {
		return slices.DeleteFunc(slices.Clone(roles), func(r rbacv1.ClusterRole) bool { return r.Name != name })
	}
	jobsOnly, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-queue-reader", only(jobsRole), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	predictionOnly, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-queue-watcher", only("terraform-provider-training-admission-prediction"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	prefix := acctest.RandomWithPrefix("tf-acc-qdata")
	first, second := prefix+"-a", prefix+"-b"
	owner := newWorkspace(t)
	owner.write(quotaConfig(prefix, 2, queuedJob(jobs.MPI, "a", first, "  wait_for = \"admitted\"\n")+
		queuedJob(jobs.MPI, "b", second, "  wait_for = \"created\"\n  depends_on = [training_mpi_job.a]\n")))
	owner.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { owner.run("destroy", "-auto-approve", "-input=false") })
	if err := a.waitAdmittedWorkloads(prefix+"-team", 1)(nil); err != nil {
		t.Fatal(err)
	}
	a.waitWorkloadWaits(second)

	read := func(kubeconfig, dataSource, name string) queueData {
		t.Helper()
		w := newWorkspace(t)
		w.write(fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n\ndata %q \"q\" {\n  name = %q\n}\n\noutput \"q\" {\n  value = data.%s.q\n}\n",
			kubeconfig, dataSource, name, dataSource))
		w.run("apply", "-auto-approve", "-input=false")
		var q queueData
		if err := json.Unmarshal([]byte(w.run("output", "-json", "q")), &q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	check := func(what string, q queueData) {
		t.Helper()
		if len(q.Workloads) != 2 || q.Workloads[0].Job != "MPIJob "+first || !q.Workloads[0].Admitted || q.Workloads[1].Job != "MPIJob "+second || q.Workloads[1].Admitted {
			t.Errorf("%s: workloads %+v, want %s admitted, then %s waiting", what, q.Workloads, first, second)
		}
		if q.Head == nil || q.Head.Job != "MPIJob "+second || q.Head.Reason == nil || !strings.Contains(*q.Head.Reason, "insufficient unused quota for nvidia.com/gpu") {
			t.Errorf("%s: head %+v, want %s waiting for GPU quota", what, q.Head, second)
		}
	}
	lq := read(jobsOnly, "training_local_queue", prefix)
	check("training_local_queue", lq)
	if lq.ClusterQueue != prefix+"-team" {
		t.Errorf("training_local_queue: cluster_queue %q", lq.ClusterQueue)
	}
	cq := read(predictionOnly, "training_cluster_queue", prefix+"-team")
	check("training_cluster_queue", cq)
	gpu := prefix + "-gpu/nvidia.com/gpu"
	if cq.Usage[gpu] != "2" || !slices.ContainsFunc(cq.Quotas, func(q struct {
		Flavor, Resource string
		Nominal          string `json:"nominal_quota"`
	}) bool {
		return q.Flavor == prefix+"-gpu" && q.Resource == "nvidia.com/gpu" && q.Nominal == "2"
	}) {
		t.Errorf("training_cluster_queue: usage %v, quotas %+v; want 2 GPUs of 2 in use", cq.Usage, cq.Quotas)
	}

	// Neither identity may write the queues it read.
	stop := []byte(`{"spec":{"stopPolicy":"Hold"}}`)
	if _, err := newAPIAt(t, jobsOnly).dyn.Resource(kueue.LocalQueueGVR).Namespace("default").Patch(context.Background(), prefix, k8stypes.MergePatchType, stop, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the jobs' role may change the LocalQueue (%v)", err)
	}
	if _, err := newAPIAt(t, predictionOnly).dyn.Resource(kueue.ClusterQueueGVR).Patch(context.Background(), prefix+"-team", k8stypes.MergePatchType, stop, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the admission prediction's role may change the ClusterQueue (%v)", err)
	}
}

// waitWorkloadWaits waits until the Workload of the job is refused its quota by Kueue's
// scheduler (QuotaReserved false, with its message).
func (a *api) waitWorkloadWaits(job string) {
	a.t.Helper()
	last := "no Workload"
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := a.dyn.Resource(kueue.WorkloadGVR).Namespace("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, wl := range list.Items {
			for _, ref := range wl.GetOwnerReferences() {
				if ref.Name == job {
					last = fmt.Sprintf("%+v", kueue.ReadWorkload(&wl))
					if strings.Contains(kueue.ReadWorkload(&wl).Reason, "insufficient") {
						return true, nil
					}
				}
			}
		}
		return false, nil
	})
	if err != nil {
		a.t.Fatalf("the Workload of %s is not refused its quota (%s): %v", job, last, err)
	}
}
