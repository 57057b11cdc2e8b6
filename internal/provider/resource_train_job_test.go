package provider

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

var (
	jobSetGVR    = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// trainJobConfig is a ClusterTrainingRuntime for torch and a TrainJob of nodes x 1 GPU on it,
// tolerating the GPU nodes' taint, and the training_job data source reading it.
func trainJobConfig(name string, nodes int, extra string) string {
	return providerConfig() + fmt.Sprintf(`
resource "training_runtime" "torch" {
  name      = "%[1]s-rt"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command   = ["torchrun", "/workspace/train.py"]
}

resource "training_train_job" "test" {
  name        = %[1]q
  runtime     = training_runtime.torch.name
  command     = ["torchrun", "/workspace/train.py", "--epochs", "3"]
  num_nodes   = %[2]d
  gpus        = 1
  tolerations = ["gpu_node"]
  env         = { EPOCHS = "3" }
  labels      = { team = "vision" }
  pod_labels  = { team = "vision" }
%[3]s}

data "training_job" "test" {
  kind = "train"
  name = training_train_job.test.name
}
`, name, nodes, extra)
}

// checkTrainJobNodes checks the pods Trainer and JobSet made of the job: n nodes Running on the
// two GPU nodes, each with the torchrun environment Trainer generates (node count, rank from
// the pod's completion index, the first node's address through the JobSet's Service), the job's
// env and the labels of its runtime patch.
func checkTrainJobNodes(a *api, name string, n int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		pods, err := a.runningPods(jobs.Train.PodSelector(name), n)
		if err != nil {
			return err
		}
		ranks := map[string]bool{}
		for _, p := range pods {
			if node := p.Spec.NodeName; node != "cn-beijing.192.168.3.228" && node != "cn-beijing.192.168.3.229" {
				return fmt.Errorf("pod %s runs on %s, not on a gpu_node node", p.Name, node)
			}
			c := p.Spec.Containers[0]
			want := map[string]string{"PET_NNODES": strconv.Itoa(n), "PET_MASTER_ADDR": name + "-node-0-0." + name, "PET_MASTER_PORT": "29500",
				"PET_NPROC_PER_NODE": "auto", "EPOCHS": "3"}
			for k, v := range want {
				if got, _ := env(c, k); got != v {
					return fmt.Errorf("pod %s: %s=%q, want %q", p.Name, k, got, v)
				}
			}
			if err := rankFromCompletionIndex(c); err != nil {
				return fmt.Errorf("pod %s: %w", p.Name, err)
			}
			ranks[p.Annotations["batch.kubernetes.io/job-completion-index"]] = true
			if p.Labels["team"] != "vision" || p.Labels[jobs.ReplicatedJobLabel] != jobs.TrainerNode {
				return fmt.Errorf("pod %s labels %v", p.Name, p.Labels)
			}
			if q := c.Resources.Limits[jobs.DefaultGPUResource]; q.Value() != 1 {
				return fmt.Errorf("pod %s: %s GPUs", p.Name, q.String())
			}
			if strings.Join(c.Command, " ") != "torchrun /workspace/train.py --epochs 3" {
				return fmt.Errorf("pod %s runs %v", p.Name, c.Command)
			}
		}
		for i := range n {
			if !ranks[strconv.Itoa(i)] {
				return fmt.Errorf("no node of rank %d among %v", i, ranks)
			}
		}
		if _, err := a.get(jobSetGVR, "default", name); err != nil {
			return fmt.Errorf("the TrainJob's JobSet: %w", err)
		}
		return nil
	}
}

// rankFromCompletionIndex: PET_NODE_RANK is the pod's completion index, which the Job controller
// sets per pod.
func rankFromCompletionIndex(c corev1.Container) error {
	for _, e := range c.Env {
		if e.Name == "PET_NODE_RANK" {
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
				return fmt.Errorf("PET_NODE_RANK is %+v, not the completion index", e)
			}
			return nil
		}
	}
	return fmt.Errorf("no PET_NODE_RANK")
}

// A TrainJob of 2 nodes x 1 GPU on a ClusterTrainingRuntime made in the same configuration: its
// pods run on the tainted GPU nodes with the environment Trainer generates for torchrun, it
// reads RUNNING (the data source too), the next plan is empty; a new num_nodes replaces it;
// suspend changes it in place; import gives the state the apply did; destroy removes the job,
// its JobSet and every pod.
func TestAccTrainJob_torchOnClusterRuntime(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-tj")
	var uid types.UID
	keepUID := func(*terraform.State) error {
		job, err := a.get(jobs.Train.GVR, "default", name)
		if err == nil {
			uid = job.GetUID()
		}
		return err
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{
				Config: trainJobConfig(name, 2, ""),
				Check:  resource.ComposeTestCheckFunc(checkTrainJobNodes(a, name, 2), keepUID),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_train_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					statecheck.ExpectKnownValue("training_train_job.test", tfjsonpath.New("instances"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue("training_train_job.test", tfjsonpath.New("instances").AtSliceIndex(1).AtMapKey("index"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("training_runtime.torch", tfjsonpath.New("kind"), knownvalue.StringExact(jobs.ClusterTrainingRuntimeKind)),
					statecheck.ExpectKnownValue("data.training_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
					statecheck.ExpectKnownValue("data.training_job.test", tfjsonpath.New("instances"), knownvalue.ListSizeExact(2)),
				},
			},
			{
				Config:           trainJobConfig(name, 2, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: trainJobConfig(name, 3, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_train_job.test", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("training_runtime.torch", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(checkTrainJobNodes(a, name, 3), func(*terraform.State) error {
					if job, err := a.get(jobs.Train.GVR, "default", name); err != nil || job.GetUID() == uid {
						return fmt.Errorf("the TrainJob was not replaced (uid %v, err %v)", uid, err)
					}
					return nil
				}, keepUID),
			},
			{
				Config: trainJobConfig(name, 3, "  suspend = true\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_train_job.test", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if job, err := a.get(jobs.Train.GVR, "default", name); err != nil || job.GetUID() != uid {
						return fmt.Errorf("the TrainJob was replaced to suspend it (uid %v, err %v)", uid, err)
					}
					return a.waitPods(jobs.Train.PodSelector(name), func(p []corev1.Pod) bool { return len(p) == 0 })
				},
			},
			{
				Config:            trainJobConfig(name, 3, "  suspend = true\n"),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("training_train_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Suspended))},
			},
			{
				Config: trainJobConfig(name, 3, "  suspend = false\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_train_job.test", plancheck.ResourceActionUpdate),
				}},
				Check: checkTrainJobNodes(a, name, 3),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_train_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
				},
			},
			{
				// The object's labels change in place: Trainer lets a TrainJob's metadata change.
				Config: strings.Replace(trainJobConfig(name, 3, ""), `labels      = { team = "vision" }`, `labels      = { team = "nlp" }`, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_train_job.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("training_train_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
				}},
				Check: func(*terraform.State) error {
					job, err := a.get(jobs.Train.GVR, "default", name)
					if err != nil || job.GetUID() != uid || job.GetLabels()["team"] != "nlp" {
						return fmt.Errorf("the TrainJob's labels were not changed in place (uid %v, labels %v, err %v)", uid, job.GetLabels(), err)
					}
					return checkTrainJobNodes(a, name, 3)(nil)
				},
			},
			{
				ResourceName: "training_train_job.test", ImportState: true, ImportStateId: "default/" + name, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "start_time", "instances"},
			},
			{
				// The pods' labels are in the runtime patch, immutable while the job runs.
				Config: strings.Replace(trainJobConfig(name, 3, ""), `pod_labels  = { team = "vision" }`, `pod_labels  = { team = "vision", tier = "gold" }`, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_train_job.test", plancheck.ResourceActionDestroyBeforeCreate),
				}},
			},
			{
				ResourceName: "training_runtime.torch", ImportState: true, ImportStateId: name + "-rt", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

const kubectlTrainJob = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: %[1]s
  namespace: default
  labels: {release: %[1]s}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: pytorch/pytorch:2
    command: [torchrun, train.py]
    numNodes: 2
    resourcesPerNode: {limits: {nvidia.com/gpu: 1}}
  runtimePatches:
  - manager: example.com/kubectl
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    tolerations: [{key: gpu_node, operator: Exists}]
`

// A TrainJob made with kubectl on Trainer's own runtime, its placement in kubectl's runtime
// patch, imports into a configuration that says the same in this provider's words with an empty
// plan, the job unchanged.
func TestAccTrainJob_importMadeWithKubectl(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-tjk")
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(fmt.Appendf(nil, kubectlTrainJob, name), &obj.Object); err != nil {
		t.Fatal(err)
	}
	created, err := a.dyn.Resource(jobs.Train.GVR).Namespace("default").Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	config := providerConfig() + fmt.Sprintf(`
import {
  to = training_train_job.imported
  id = "default/%[1]s"
}

resource "training_train_job" "imported" {
  name        = %[1]q
  runtime     = "torch-distributed"
  image       = "pytorch/pytorch:2"
  command     = ["torchrun", "train.py"]
  num_nodes   = 2
  gpus        = 1
  tolerations = ["gpu_node"]
  labels      = { release = %[1]q }
}
`, name)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_train_job.imported", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					job, err := a.get(jobs.Train.GVR, "default", name)
					if err != nil || job.GetUID() != created.GetUID() {
						return fmt.Errorf("the imported TrainJob changed (err %v)", err)
					}
					return nil
				},
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// Bad input fails before anything is made, naming the attribute: at plan time when the rule is
// knowable (zero nodes, a malformed toleration, what a TrainJob cannot carry, an MPI block on a
// torch runtime), at apply before the job is created when only the cluster knows (a runtime that
// does not exist, listing those that do).
func TestAccTrainJob_badInput(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-tjbad")
	job := func(extra string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_train_job" "bad" {
  name      = %q
  runtime   = "torch-distributed"
  image     = "pytorch/pytorch:2"
%s}
`, name, extra)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{Config: job("  num_nodes = 0\n"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)num_nodes.*between 1 and 10000`)},
			{Config: job("  num_nodes = 1\n  tolerations = [\"gpu_node=:Foo\"]\n"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)tolerations.*Foo`)},
			{Config: job("  num_nodes = 1\n  env_from_secrets = [\"s\"]\n"), PlanOnly: true, ExpectError: regexp.MustCompile(`An argument named "env_from_secrets" is not expected here`)},
			{Config: providerConfig() + `
resource "training_runtime" "bad" {
  name      = "tf-acc-bad-runtime"
  framework = "torch"
  image     = "x"
  mpi = {}
}
`, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)mpi.*framework = "mpi"`)},
			{
				Config:      strings.Replace(job("  num_nodes = 1\n"), `"torch-distributed"`, `"no-such-runtime"`, 1),
				ExpectError: regexp.MustCompile(`(?s)No ClusterTrainingRuntime no-such-runtime.*torch-distributed.*waited\s+60\s+seconds.*Nothing\s+was\s+created`),
				Check: func(*terraform.State) error {
					if _, err := a.get(jobs.Train.GVR, "default", name); !apierrors.IsNotFound(err) {
						return fmt.Errorf("a TrainJob was made for an unknown runtime (err %v)", err)
					}
					return nil
				},
			},
		},
	})
}

// A namespaced MPI TrainingRuntime: a TrainJob on it runs its nodes and then a launcher, and
// Trainer writes the hostfile of the nodes with the runtime's slots; changing the runtime's
// template updates it in place (jobs keep theirs) and it imports.
func TestAccRuntime_namespacedMPI(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-mpi")
	config := func(image string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_runtime" "mpi" {
  name        = "%[1]s-rt"
  namespace   = "default"
  framework   = "mpi"
  image       = %[2]q
  command     = ["mpirun", "python", "/examples/mnist.py"]
  tolerations = ["ssd_node"]

  mpi = {
    processes_per_node = 2
  }
}

resource "training_train_job" "test" {
  name         = %[1]q
  runtime      = training_runtime.mpi.name
  runtime_kind = training_runtime.mpi.kind
  num_nodes    = 2
}
`, name, image)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{
				Config: config("horovod/horovod:0.28.1"),
				Check: func(*terraform.State) error {
					cm, err := a.get(configMapGVR, "default", name+"-mpi-hostfile")
					if err != nil {
						return fmt.Errorf("Trainer's hostfile: %w", err)
					}
					hostfile, _, _ := unstructured.NestedString(cm.Object, "data", "hostfile")
					want := fmt.Sprintf("%[1]s-node-0-0.%[1]s slots=2\n%[1]s-node-0-1.%[1]s slots=2\n", name)
					if hostfile != want {
						return fmt.Errorf("hostfile %q, want %q", hostfile, want)
					}
					if _, err := a.runningPods(jobs.Train.PodSelector(name)+","+jobs.ReplicatedJobLabel+"=node", 2); err != nil {
						return err
					}
					launchers, err := a.runningPods(jobs.Train.PodSelector(name)+","+jobs.ReplicatedJobLabel+"=launcher", 1)
					if err != nil {
						return err
					}
					if c := launchers[0].Spec.Containers[0]; strings.Join(c.Command, " ") != "mpirun python /examples/mnist.py" || launchers[0].Spec.NodeName != "cn-beijing.192.168.3.230" {
						return fmt.Errorf("launcher runs %v on %s", c.Command, launchers[0].Spec.NodeName)
					}
					return nil
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_runtime.mpi", tfjsonpath.New("kind"), knownvalue.StringExact(jobs.TrainingRuntimeKind)),
					statecheck.ExpectKnownValue("training_train_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running)),
				},
			},
			{
				Config: config("horovod/horovod:0.28.2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_runtime.mpi", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("training_train_job.test", plancheck.ResourceActionNoop),
				}},
			},
			{
				ResourceName: "training_runtime.mpi", ImportState: true, ImportStateId: "default/" + name + "-rt", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// A runtime's gang scheduling makes Trainer ask for a scheduler-plugins PodGroup per job; on a
// cluster without its CRD (the local one: see cluster/install.go) Trainer cannot make the job's
// objects, and the apply fails at once with its reason instead of waiting out its timeout.
func TestAccRuntime_gangSchedulingNeedsPodGroups(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-gang")
	config := providerConfig() + fmt.Sprintf(`
resource "training_runtime" "gang" {
  name      = "%[1]s-rt"
  framework = "torch"
  image     = "pytorch/pytorch:2"

  gang_scheduling = {
    schedule_timeout_seconds = 120
  }
}

resource "training_train_job" "test" {
  name      = %[1]q
  runtime   = training_runtime.gang.name
  num_nodes = 2
}
`, name)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: regexp.MustCompile(`(?s)Trainer cannot make the job's objects:.*PodGroup`),
			Check: func(*terraform.State) error {
				rt, err := a.get(jobs.ClusterTrainingRuntimeGVR, "", name+"-rt")
				if err != nil {
					return err
				}
				if timeout, _, _ := unstructured.NestedInt64(rt.Object, "spec", "podGroupPolicy", "coscheduling", "scheduleTimeoutSeconds"); timeout != 120 {
					return fmt.Errorf("the runtime's gang timeout is %d", timeout)
				}
				return nil
			},
		}},
	})
}

// An MPI runtime's plan, through the real CLI: an MPI implementation Trainer v2.3.0 makes no job
// for is refused, and a runtime run as root is warned of (Trainer's 0640 key is refused to its
// owner by OpenSSH); the defaults, mpiuser, plan without a warning.
func TestAccRuntime_planRefusesWhatTrainersMPIPluginCannotRun(t *testing.T) {
	newAPI(t)
	t.Parallel()
	w := newWorkspace(t)
	runtime := func(mpi string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_runtime" "mpi" {
  name      = "tf-acc-mpi-plan"
  namespace = "default"
  framework = "mpi"
  image     = "mpi:1"
  command   = ["mpirun", "true"]

  mpi = {
%s  }
}
`, mpi)
	}
	w.write(runtime("    implementation = \"Intel\"\n"))
	if out, err := w.try(nil, "plan", "-input=false"); err == nil || !strings.Contains(flat(out), `value must be one of: ["OpenMPI"]`) {
		t.Errorf("implementation = \"Intel\" planned (err %v):\n%s", err, out)
	}
	rootWarning := "Warning: MPI as root cannot use Trainer's SSH key as mounted"
	w.write(runtime("    run_as_user = 0\n"))
	if out := w.run("plan", "-input=false"); !strings.Contains(out, rootWarning) || !strings.Contains(flat(out), "UNPROTECTED PRIVATE KEY FILE") {
		t.Errorf("run_as_user = 0 planned without the warning:\n%s", out)
	}
	w.write(runtime(""))
	if out := w.run("plan", "-input=false"); strings.Contains(out, rootWarning) || !strings.Contains(out, "run_as_user") {
		t.Errorf("the default MPI policy's plan:\n%s", out)
	}
}

// A name that Trainer takes but JobSet would refuse on the job's runtime (its pods' names grow
// with the runtime's replicated jobs and num_nodes) is refused before anything is made: at plan
// on a runtime the cluster has, at apply, before the TrainJob, on one the same apply makes.
func TestAccTrainJob_nameJobSetWouldRefuseIsRefusedBeforeAnythingIsMade(t *testing.T) {
	a := newAPI(t)
	// 49 characters: one more than torch-distributed's node pods leave with 2 nodes.
	long := acctest.RandomWithPrefix("tf-acc-tjname") + "-"
	long += strings.Repeat("x", 49-len(long))
	onTrainers := providerConfig() + fmt.Sprintf(`
resource "training_train_job" "long" {
  name      = %q
  runtime   = "torch-distributed"
  image     = "pytorch/pytorch:2"
  num_nodes = 2
}
`, long)
	// On an MPI runtime of the same apply the launcher's pods bound it: 44 characters.
	mpiName := long[:45]
	onOwn := providerConfig() + fmt.Sprintf(`
resource "training_runtime" "mpi" {
  name      = "%[1]s-rt"
  namespace = "default"
  framework = "mpi"
  image       = "mpi:1"
  command     = ["mpirun", "true"]
  tolerations = ["ssd_node"]
}

resource "training_train_job" "long" {
  name         = %[1]q
  runtime      = training_runtime.mpi.name
  runtime_kind = training_runtime.mpi.kind
  num_nodes    = 2
  wait_for     = "created"
}
`, mpiName)
	nothingMade := func(name string) func(*terraform.State) error {
		return func(*terraform.State) error {
			if _, err := a.get(jobs.Train.GVR, "default", name); !apierrors.IsNotFound(err) {
				return fmt.Errorf("a TrainJob %s was made (err %v)", name, err)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, mpiName[:44]),
		Steps: []resource.TestStep{
			{Config: onTrainers, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)TrainJob name too long for its runtime.*49 characters long; on\s+this\s+runtime\s+at\s+most\s+48`)},
			{Config: onOwn, ExpectError: regexp.MustCompile(`(?s)45 characters long; on\s+this\s+runtime\s+at\s+most\s+44.*launcher`)},
			{
				// 44 characters fit.
				PreConfig: func() {
					if err := nothingMade(mpiName)(nil); err != nil {
						t.Fatal(err)
					}
				},
				Config: strings.Replace(onOwn, mpiName+`"`, mpiName[:44]+`"`, 1),
			},
		},
	})
}

// torchRuntime is the torch training_runtime "torch" that a test's TrainJob named job runs on.
func torchRuntime(job string) string {
	return fmt.Sprintf(`
resource "training_runtime" "torch" {
  name      = "%s-rt"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1"
  command   = ["torchrun", "/train.py"]
}
`, job)
}

// A TrainJob's grace period reaches every pod through Trainer's runtime patch, imports exactly,
// and a new one replaces the job (Trainer makes it immutable).
func TestAccTrainJob_gracePeriodReachesItsPodsImportsAndReplaces(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-tjg")
	config := func(grace int) string {
		return providerConfig() + torchRuntime(name) + fmt.Sprintf(`
resource "training_train_job" "test" {
  name                             = %[1]q
  runtime                          = training_runtime.torch.name
  num_nodes                        = 2
  tolerations                      = ["gpu_node"]
  termination_grace_period_seconds = %[2]d
}
`, name, grace)
	}
	podsGrace := func(want int64) resource.TestCheckFunc {
		return func(*terraform.State) error {
			pods, err := a.runningPods(jobs.Train.PodSelector(name), 2)
			if err != nil {
				return err
			}
			for _, p := range pods {
				if g := p.Spec.TerminationGracePeriodSeconds; g == nil || *g != want {
					return fmt.Errorf("pod %s: terminationGracePeriodSeconds %v, want %d", p.Name, g, want)
				}
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.Train, name),
		Steps: []resource.TestStep{
			{Config: config(300), Check: podsGrace(300)},
			{
				ResourceName: "training_train_job.test", ImportState: true, ImportStateId: "default/" + name, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
			},
			{Config: config(600), Check: podsGrace(600), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("training_train_job.test", plancheck.ResourceActionDestroyBeforeCreate)}}},
		},
	})
}
