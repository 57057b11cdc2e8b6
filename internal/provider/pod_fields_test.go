package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// gangPolicy is a gang scheduler's PodGroup policy for a Kubeflow job.
const gangPolicy = "  gang_scheduling = { min_available = 2, volcano_queue = \"research\", schedule_timeout_seconds = 600 }\n"

// productionPodFields are the typed pod fields a platform team's job sets beside its GPUs.
const productionPodFields = `  cpu                              = "1"
  cpu_limit                        = false
  scheduler_name                   = "default-scheduler"
  host_ipc                         = true
  termination_grace_period_seconds = 120
  topology_spread                  = [{ topology_key = "kubernetes.io/hostname", when_unsatisfiable = "ScheduleAnyway" }]
`

// The typed pod fields (and, on the PyTorchJob, its gang policy and the host network: its master and its one worker
// then need a node each, for training-operator gives both port 23456) reach the pods each operator makes (training-operator's PyTorchJob,
// FrameworkController's elastic job, whose 1.16 types must carry them too): every pod of a role
// has the scheduler, host IPC, grace period and an unlimited CPU request, and its spread
// constraint selects exactly its role's pods of its job, as the operator labelled them. The plan
// after the apply is empty and an import gives the same state.
func TestAccPodFields_reachTheOperatorsPodsWhoseSpreadSelectsItsOwnRoleAndImportExactly(t *testing.T) {
	a := newAPI(t)
	for _, tc := range []struct {
		kind   *jobs.Kind
		name   string
		config func(name string) string
	}{
		{jobs.PyTorch, acctest.RandomWithPrefix("tf-acc-ptf"), func(name string) string {
			return pytorchJobConfig(name, 1, productionPodFields+"  host_network = true\n"+gangPolicy)
		}},
		{jobs.Elastic, elasticJobName(), func(name string) string { return elasticJobConfig(name, 2, productionPodFields) }},
	} {
		t.Run(tc.kind.Name, func(t *testing.T) {
			address := "training_" + tc.kind.Name + "_job.test"
			config := tc.config(tc.name)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				CheckDestroy:             checkJobsGone(a),
				Steps: []resource.TestStep{
					{Config: config, Check: func(*terraform.State) error { return checkPodFields(a, tc.kind, tc.name) }},
					{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
					{
						ResourceName: address, ImportState: true, ImportStateId: "default/" + tc.name, ImportStateVerify: true,
						ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
					},
				},
			})
		})
	}
}

// checkPodFields checks the job's pods as the operator made them (see the test above).
func checkPodFields(a *api, kind *jobs.Kind, name string) error {
	if kind == jobs.PyTorch {
		job, err := a.dyn.Resource(kind.GVR).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		policy, _, err := unstructured.NestedFieldNoCopy(job.Object, "spec", "runPolicy", "schedulingPolicy")
		if err != nil {
			return err
		}
		if fmt.Sprint(policy) != "map[minAvailable:2 queue:research scheduleTimeoutSeconds:600]" {
			return fmt.Errorf("the job's schedulingPolicy is %v", policy)
		}
	}
	pods := a.pods("default", kind.PodSelector(name))
	byRole := map[string]int{}
	for _, p := range pods {
		byRole[p.Labels[kind.RoleLabel]]++
	}
	if len(pods) < 2 {
		return fmt.Errorf("%d pods of %s", len(pods), name)
	}
	for _, p := range pods {
		role := p.Labels[kind.RoleLabel]
		s := p.Spec
		if len(s.TopologySpreadConstraints) != 1 || s.TopologySpreadConstraints[0].LabelSelector == nil {
			return fmt.Errorf("pod %s: spread %+v", p.Name, s.TopologySpreadConstraints)
		}
		selector := metav1.FormatLabelSelector(s.TopologySpreadConstraints[0].LabelSelector)
		selected, err := a.kube.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		if len(selected.Items) != byRole[role] {
			return fmt.Errorf("pod %s (%s): its spread selects %d pods (%s), its role has %d", p.Name, role, len(selected.Items), selector, byRole[role])
		}
		for _, q := range selected.Items {
			if q.Labels[kind.RoleLabel] != role {
				return fmt.Errorf("pod %s (%s): its spread selects %s, of role %s", p.Name, role, q.Name, q.Labels[kind.RoleLabel])
			}
		}
		if kind == jobs.Elastic && role == jobs.EtcdRole {
			continue // the rendezvous' companion keeps the defaults
		}
		if s.SchedulerName != "default-scheduler" || !s.HostIPC || ptr.Deref(s.TerminationGracePeriodSeconds, 0) != 120 {
			return fmt.Errorf("pod %s: scheduler %q, hostIPC %v, grace %v", p.Name, s.SchedulerName, s.HostIPC, s.TerminationGracePeriodSeconds)
		}
		if kind == jobs.PyTorch && (!s.HostNetwork || s.DNSPolicy != corev1.DNSClusterFirstWithHostNet) {
			return fmt.Errorf("pod %s: hostNetwork %v, dnsPolicy %s", p.Name, s.HostNetwork, s.DNSPolicy)
		}
		r := s.Containers[0].Resources
		if _, limited := r.Limits[corev1.ResourceCPU]; limited || r.Requests.Cpu().String() != "1" {
			return fmt.Errorf("pod %s: cpu request %s, limit %v", p.Name, r.Requests.Cpu(), r.Limits.Cpu())
		}
	}
	return nil
}
