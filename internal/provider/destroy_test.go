package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// A pod on a node that no kubelet answers for can never go by itself: destroy must not wait for
// it until its timeout, but finish once everything else is gone and leave that pod to the node's
// lifecycle, with a warning.
//
// The lost node is a Node object no KWOK manages: never Ready, and with no allocatable
// capacity, so the scheduler places nothing on it. The pod on it is made by the test with the
// job's labels and an owner reference to the job, as the operator's own pods are.
func TestAccMPIJob_destroyLeavesPodsOfALostNode(t *testing.T) {
	a := newAPI(t)
	// The lost node changes the cluster's set of nodes, which the nodes data source's test
	// expects exactly: taken once running in parallel, as that test does.
	t.Parallel()
	nodeTaintsMu.Lock()
	defer nodeTaintsMu.Unlock()
	ctx := context.Background()
	name := mpiJobName()
	lost := name + "-lost-node"
	if _, err := a.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: lost}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stuck := name + "-stuck-0"
	// Deferred, so that the lost node is gone before the lock is released (a Cleanup would run after).
	defer func() {
		_ = a.kube.CoreV1().Pods("default").Delete(ctx, stuck, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		_ = a.kube.CoreV1().Nodes().Delete(ctx, lost, metav1.DeleteOptions{})
		waitGone(t, a, name)
	}()
	config := mpiJobConfig(name, 1, `  tolerations = ["ssd_node"]
  timeouts {
    delete = "3m"
  }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			// Destroy finished although the stuck pod is still there, being deleted.
			p, err := a.kube.CoreV1().Pods("default").Get(ctx, stuck, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("the stuck pod should be left to its node: %v", err)
			}
			if p.DeletionTimestamp == nil {
				return fmt.Errorf("pod %s was not deleted by destroy", stuck)
			}
			for _, q := range a.pods("default", jobs.MPI.PodSelector(name)) {
				if q.Name != stuck {
					return fmt.Errorf("pod %s on a Ready node is left after destroy", q.Name)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				job, err := a.get(jobs.MPI.GVR, "default", name)
				if err != nil {
					return err
				}
				labels := map[string]string{jobs.JobNameLabel: name, jobs.OperatorNameLabel: "mpi-operator", jobs.JobRoleLabel: "worker"}
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: stuck, Namespace: "default", Labels: labels,
						OwnerReferences: []metav1.OwnerReference{{APIVersion: job.GetAPIVersion(), Kind: job.GetKind(), Name: name,
							UID: job.GetUID(), BlockOwnerDeletion: ptr.To(true)}}},
					Spec: corev1.PodSpec{NodeName: lost, TerminationGracePeriodSeconds: ptr.To[int64](1),
						Containers:  []corev1.Container{{Name: "c", Image: "registry.example/none:1"}},
						Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
				}
				_, err = a.kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					err = nil
				}
				return err
			},
		}},
	})
}

// A job this provider made from the same configuration, but not in this apply, is adopted only
// if this apply could still have been creating it: one that has started (here, after its
// state was removed) is refused, with the import command, and left as it was.
func TestAccMPIJob_aStartedJobOfAnotherApplyIsNotAdopted(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	config := mpiJobConfig(name, 1, `  tolerations = ["ssd_node"]`)
	var uid k8stypes.UID
	t.Cleanup(func() {
		_ = a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Delete(context.Background(), name, metav1.DeleteOptions{})
		waitGone(t, a, name)
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: func(*terraform.State) error {
				job, err := a.get(jobs.MPI.GVR, "default", name)
				if err == nil {
					uid = job.GetUID()
				}
				return err
			}},
			// Terraform forgets the job; it keeps running.
			{Config: providerConfig() + "removed {\n  from = training_mpi_job.test\n  lifecycle {\n    destroy = false\n  }\n}\n"},
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)same\s+configuration,\s+but\s+not\s+in\s+this\s+apply,\s+and\s+it\s+has\s+started\s+\(RUNNING\).*terraform\s+import\s+<address>\s+default/` + name),
			},
			{
				// Still the same job, untouched.
				Config: providerConfig(),
				Check: func(*terraform.State) error {
					job, err := a.get(jobs.MPI.GVR, "default", name)
					if err != nil {
						return fmt.Errorf("the running job was lost: %v", err)
					}
					if job.GetUID() != uid {
						return fmt.Errorf("the running job was replaced (uid %s, was %s)", job.GetUID(), uid)
					}
					return nil
				},
			},
		},
	})
}

// Destroy deletes a job in the background (the object goes at once) and waits until what its
// operator made for it is gone too, so that a job made again under the name never meets its
// predecessor's hostfile, launcher or Service. Here the hostfile ConfigMap is held by a
// finalizer of the test's until 2 s after the MPIJob has gone: destroy must not return before
// it is released.
func TestAccMPIJob_destroyWaitsForWhatTheOperatorMade(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	name := mpiJobName()
	configMap := name + "-config"
	const hold = "training.kubetrain.io/test-hold"
	released := make(chan time.Time, 1)
	release := func() error {
		_, err := a.kube.CoreV1().ConfigMaps("default").Patch(ctx, configMap, k8stypes.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
		return err
	}
	t.Cleanup(func() { _ = release() })
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			select {
			case at := <-released:
				t.Logf("destroy returned %s after the ConfigMap was released", time.Since(at).Round(time.Millisecond))
			default:
				return fmt.Errorf("destroy returned while %s was still held", configMap)
			}
			return checkJobsGone(a)(s)
		},
		Steps: []resource.TestStep{{
			Config: mpiJobConfig(name, 1, `  tolerations = ["ssd_node"]`),
			Check: func(*terraform.State) error {
				if _, err := a.kube.CoreV1().ConfigMaps("default").Patch(ctx, configMap, k8stypes.MergePatchType,
					[]byte(`{"metadata":{"finalizers":["`+hold+`"]}}`), metav1.PatchOptions{}); err != nil {
					return err
				}
				go func() {
					_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
						_, err := a.get(jobs.MPI.GVR, "default", name)
						return apierrors.IsNotFound(err), nil
					})
					time.Sleep(2 * time.Second)
					released <- time.Now() // before the release: destroy may return at once after it
					if err := release(); err != nil {
						t.Errorf("releasing %s: %v", configMap, err)
					}
				}()
				return nil
			},
		}},
	})
}
