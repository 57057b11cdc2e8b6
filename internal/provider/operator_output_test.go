package provider

// These tests read what the operators made of the provider's objects, the way the programs in
// the pods see it: the TF_CONFIG training-operator gives each TensorFlow task, the hostfile and
// discovery script mpi-operator gives the MPI launcher, the rendezvous arguments each elastic
// PyTorch worker starts with. KWOK's pods carry the specs the operators generated.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

func env(c corev1.Container, name string) (string, bool) {
	value, found := "", false
	for _, e := range c.Env {
		if e.Name == name {
			value, found = e.Value, true // the last definition is the one the process sees
		}
	}
	return value, found
}

// runningPods waits for exactly n Running pods of the selector and returns them.
func (a *api) runningPods(selector string, n int) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	err := a.waitPods(selector, func(list []corev1.Pod) bool {
		pods = pods[:0]
		for _, p := range list {
			if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
				return false
			}
			pods = append(pods, p)
		}
		return len(pods) == n
	})
	return pods, err
}

// expectGPUVisibility checks NVIDIA_VISIBLE_DEVICES as the pod's container has it: hidden ("void",
// or mpi-operator's empty value on its launcher) for a container that requests no GPU, left to the
// device plugin (unset) for one that does.
func expectGPUVisibility(p corev1.Pod) error {
	c := p.Spec.Containers[0]
	value, set := env(c, jobs.NvidiaVisibleDevices)
	_, gpu := c.Resources.Limits[jobs.DefaultGPUResource]
	switch {
	case gpu && set:
		return fmt.Errorf("pod %s requests GPUs but has %s=%q", p.Name, jobs.NvidiaVisibleDevices, value)
	case !gpu && (!set || (value != jobs.NoGPUs && value != "")):
		return fmt.Errorf("pod %s requests no GPU but would see the node's: %s=%q (set: %v)", p.Name, jobs.NvidiaVisibleDevices, value, set)
	}
	return nil
}

type tfConfig struct {
	Cluster map[string]json.RawMessage `json:"cluster"`
	Task    struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	} `json:"task"`
}

// checkTFConfig checks every pod's TF_CONFIG as training-operator generated it: it parses, its
// cluster lists every task of every role (roles: role -> count) under the job's own names, and its
// task is the pod's own role and index.
func checkTFConfig(a *api, name string, roles map[string]int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		total := 0
		for _, n := range roles {
			total += n
		}
		pods, err := a.runningPods(jobs.TF.PodSelector(name), total)
		if err != nil {
			return err
		}
		for _, p := range pods {
			raw, ok := env(p.Spec.Containers[0], "TF_CONFIG")
			if !ok {
				return fmt.Errorf("pod %s has no TF_CONFIG", p.Name)
			}
			var cfg tfConfig
			if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
				return fmt.Errorf("pod %s: TF_CONFIG does not parse: %v: %s", p.Name, err, raw)
			}
			for role, n := range roles {
				var hosts []string
				if err := json.Unmarshal(cfg.Cluster[role], &hosts); err != nil {
					return fmt.Errorf("pod %s: TF_CONFIG's cluster.%s is not the list of every %s task: %s", p.Name, role, role, raw)
				}
				var want []string
				for i := 0; i < n; i++ {
					want = append(want, fmt.Sprintf("%s-%s-%d.default.svc:2222", name, role, i))
				}
				if !slices.Equal(hosts, want) {
					return fmt.Errorf("pod %s: TF_CONFIG's cluster.%s is %v, want %v", p.Name, role, hosts, want)
				}
			}
			if len(cfg.Cluster) != len(roles) {
				return fmt.Errorf("pod %s: TF_CONFIG's cluster has roles %v, want exactly %v", p.Name, keys(cfg.Cluster), roles)
			}
			index, _ := strconv.Atoi(p.Labels["training.kubeflow.org/replica-index"])
			if role := p.Labels[jobs.ReplicaTypeLabel]; cfg.Task.Type != role || cfg.Task.Index != index {
				return fmt.Errorf("pod %s (%s %d): TF_CONFIG names task %s %d", p.Name, role, index, cfg.Task.Type, cfg.Task.Index)
			}
			if err := expectGPUVisibility(p); err != nil {
				return err
			}
		}
		return nil
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mpiHostfile reads the hostfile and discovery script mpi-operator generated for a job.
func (a *api) mpiHostfile(name string) (hostfile, discover string, err error) {
	cm, err := a.kube.CoreV1().ConfigMaps("default").Get(context.Background(), name+"-config", metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	return cm.Data["hostfile"], cm.Data["discover_hosts.sh"], nil
}

// checkHostfile checks that the hostfile lists every worker with its slots, in order.
func checkHostfile(a *api, name string, workers, slots int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		hostfile, _, err := a.mpiHostfile(name)
		if err != nil {
			return err
		}
		var want strings.Builder
		for i := 0; i < workers; i++ {
			fmt.Fprintf(&want, "%s-worker-%d.%s.default.svc slots=%d\n", name, i, name, slots)
		}
		if hostfile != want.String() {
			return fmt.Errorf("hostfile of %s:\n%s\nwant:\n%s", name, hostfile, want.String())
		}
		return nil
	}
}

// A plain mpirun job: the hostfile mpi-operator writes lists every worker with its slots, and a
// new worker count replaces the job (mpirun never reads the hostfile again).
func TestAccMPIJob_plainRescaleReplaces(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	config := func(workers int) string {
		return mpiJobConfig(name, workers, "  gpus = 2\n  tolerations = [\"gpu_node\"]")
	}
	var uid types.UID
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: config(2),
				Check: resource.ComposeTestCheckFunc(checkMPIPods(a, name, 2, func(string) bool { return true }), checkHostfile(a, name, 2, 2),
					func(*terraform.State) error {
						job, err := a.get(jobs.MPI.GVR, "default", name)
						if err == nil {
							uid = job.GetUID()
						}
						return err
					}),
			},
			{
				Config: config(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeTestCheckFunc(checkMPIPods(a, name, 3, func(string) bool { return true }), checkHostfile(a, name, 3, 2),
					func(*terraform.State) error {
						if job, err := a.get(jobs.MPI.GVR, "default", name); err != nil || job.GetUID() == uid {
							return fmt.Errorf("the MPIJob was not replaced (uid %v, err %v)", uid, err)
						}
						return nil
					}),
			},
		},
	})
}

func elasticMPIConfig(name string, workers int, extra ...string) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = "horovod/horovod:0.28.1"
  command      = ["python", "/horovod/examples/elastic/pytorch/pytorch_mnist_elastic.py"]
  worker_count = %[2]d
  tolerations  = ["ssd_node"]
  elastic = {
    min_workers = 1
    max_workers = 4
  }
%[3]s
}
`, name, workers, strings.Join(extra, "\n"))
}

// launcher is the one launcher pod of an MPIJob.
func (a *api) launcher(name string) (corev1.Pod, error) {
	pods, err := a.runningPods(jobs.MPI.PodSelector(name)+","+jobs.JobRoleLabel+"=launcher", 1)
	if err != nil {
		return corev1.Pod{}, err
	}
	return pods[0], nil
}

// Elastic Horovod: the launcher runs horovodrun with mpi-operator's discovery script, which
// lists exactly the Running workers; a rescale changes the script in place and the launcher
// goes on, not replaced.
func TestAccMPIJob_elasticRescaleInPlace(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	onSSD := func(node string) bool { return node == ssdNode }
	var launcherUID types.UID
	const recreate = "  recreate_if_missing = true"
	checkElastic := func(workers int) resource.TestCheckFunc {
		return resource.ComposeTestCheckFunc(checkMPIPods(a, name, workers, onSSD), func(*terraform.State) error {
			launcher, err := a.launcher(name)
			if err != nil {
				return err
			}
			if launcherUID != "" && launcher.UID != launcherUID {
				return fmt.Errorf("the launcher was replaced by the rescale")
			}
			// (A restart count would say nothing here: no container starts on a simulated node.
			// TestAccRealNode_elasticMPIJobDiscoversItsLiveWorkers checks it where one does.)
			launcherUID = launcher.UID
			want := "horovodrun -np 2 --min-np 1 --max-np 4 --slots-per-host 1 --host-discovery-script /etc/mpi/discover_hosts.sh " +
				"--blacklist-cooldown-range 1 300 python /horovod/examples/elastic/pytorch/pytorch_mnist_elastic.py"
			if got := strings.Join(launcher.Spec.Containers[0].Command, " "); got != want {
				return fmt.Errorf("launcher command %q, want %q", got, want)
			}
			if err := expectGPUVisibility(launcher); err != nil {
				return err
			}
			// The script lists the Running workers; mpi-operator updates it as they come and go.
			return a.waitConfigMap(name, func(_, discover string) error {
				var want strings.Builder
				want.WriteString("#!/bin/sh\n")
				for i := 0; i < workers; i++ {
					fmt.Fprintf(&want, "echo %s-worker-%d.%s.default.svc\n", name, i, name)
				}
				if discover != want.String() {
					return fmt.Errorf("discover_hosts.sh:\n%s\nwant:\n%s", discover, want.String())
				}
				return nil
			})
		})
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionUpdate),
	}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{Config: elasticMPIConfig(name, 2), Check: checkElastic(2)},
			{Config: elasticMPIConfig(name, 4), ConfigPlanChecks: update, Check: checkElastic(4)},
			{Config: elasticMPIConfig(name, 1), ConfigPlanChecks: update, Check: checkElastic(1)},
			{Config: elasticMPIConfig(name, 5), ExpectError: regexp.MustCompile(`worker_count \(5\) must be within min_workers \(1\) and max_workers \(4\)`)},
			{
				// Scaled outside Terraform: the next plan sets it back, in place.
				PreConfig: func() {
					patch := `{"spec":{"mpiReplicaSpecs":{"Worker":{"replicas":3}}}}`
					if _, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: elasticMPIConfig(name, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("worker_count"), knownvalue.Int64Exact(1)),
				}},
				Check: checkElastic(1),
			},
			{
				// Deleted outside Terraform while running: it stays in state (with a warning), and
				// the next plan runs nothing again by itself.
				PreConfig: func() {
					deleteMPIJobOutside(t, a, name)
					launcherUID = ""
				},
				Config:           elasticMPIConfig(name, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// A gone job cannot be changed in place: the apply says how to run it again.
				Config:      elasticMPIConfig(name, 2),
				ExpectError: regexp.MustCompile(`(?s)is gone from the cluster.*-replace`),
			},
			{
				// Running it again is an explicit choice: recreate_if_missing (changing it touches nothing) ...
				Config: elasticMPIConfig(name, 1, recreate),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChanges{address: "training_mpi_job.test", action: plancheck.ResourceActionUpdate, want: []string{"recreate_if_missing"}},
				}},
				// The refresh after it drops the gone job: the plan after it is a create.
				ExpectNonEmptyPlan: true,
			},
			{
				// ... after which the next plan creates it.
				Config: elasticMPIConfig(name, 2, recreate),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionCreate),
				}},
				Check: checkElastic(2),
			},
			{
				// Finished: nothing is left to take new workers, so a rescale is refused at plan.
				PreConfig: func() { a.finishMPIJob(name) },
				Config:    elasticMPIConfig(name, 2, recreate),
				Check:     resource.TestCheckResourceAttr("training_mpi_job.test", "status", jobs.Succeeded),
			},
			{Config: elasticMPIConfig(name, 3, recreate), ExpectError: regexp.MustCompile(`(?s)Cannot rescale a finished job.*has finished \(SUCCEEDED\)`)},
		},
	})
}

// waitConfigMap waits until check accepts the hostfile and discovery script of the job.
func (a *api) waitConfigMap(name string, check func(hostfile, discover string) error) error {
	var last error
	err := a.waitPods(jobs.MPI.PodSelector(name), func([]corev1.Pod) bool {
		hostfile, discover, err := a.mpiHostfile(name)
		if err == nil {
			err = check(hostfile, discover)
		}
		last = err
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("%v: %w", last, err)
	}
	return nil
}

// The elastic job's workers start torchrun at the job's own etcd, through the NAME-etcd Service
// that exists before any worker (the Services are made before the Framework) and selects the
// etcd pod, with the bounds of --nnodes.
func TestAccElasticJob_rendezvousAtItsOwnEtcd(t *testing.T) {
	a := newAPI(t)
	proxy, kubeconfig := startProxy(t, apiproxy.Options{})
	name := elasticJobName()
	var mu sync.Mutex
	var posts []string
	proxy.SetHook(func(r *http.Request) bool {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/namespaces/default/") {
			mu.Lock()
			posts = append(posts, pathResource(r.URL.Path))
			mu.Unlock()
		}
		return true
	})
	config := fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig) + elasticResource(name, 2)
	config = strings.Replace(config, `image        = "torchelastic/examples:0.2.0"`, `image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				mu.Lock()
				order := slices.Clone(posts)
				mu.Unlock()
				if !slices.Equal(order[:min(4, len(order))], []string{"services", "services", "networkpolicies", "frameworks"}) {
					return fmt.Errorf("created in the order %v, want both Services and the etcd's NetworkPolicy before the Framework", order)
				}
				workers, err := a.runningPods(jobs.Elastic.PodSelector(name)+","+jobs.TaskRoleLabel+"="+jobs.WorkerRole, 2)
				if err != nil {
					return err
				}
				etcd, err := a.runningPods(jobs.Elastic.PodSelector(name)+","+jobs.TaskRoleLabel+"="+jobs.EtcdRole, 1)
				if err != nil {
					return err
				}
				svc, err := a.kube.CoreV1().Services("default").Get(context.Background(), name+"-etcd", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(etcd[0].Labels)) || svc.Spec.Ports[0].Port != 2379 {
					return fmt.Errorf("Service %s (selector %v, port %d) does not reach the etcd pod %s", svc.Name, svc.Spec.Selector, svc.Spec.Ports[0].Port, etcd[0].Name)
				}
				if err := expectGPUVisibility(etcd[0]); err != nil {
					return err
				}
				for _, p := range workers {
					c := p.Spec.Containers[0]
					// The worker's shell expands ${FC_FRAMEWORK_NAME} from the env FrameworkController sets.
					command := os.Expand(strings.Join(c.Command, " "), func(v string) string { value, _ := env(c, v); return value })
					for _, want := range []string{"torchrun ", "--rdzv_backend=etcd-v2", "--rdzv_endpoint=" + svc.Name + ":2379", "--rdzv_id=" + name, "--nnodes=1:4", "/workspace/train.py"} {
						if !strings.Contains(command, want) {
							return fmt.Errorf("worker %s runs %q, which lacks %q", p.Name, command, want)
						}
					}
				}
				return nil
			},
		}},
	})
}
