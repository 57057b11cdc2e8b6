package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// previousGeneration says whether the tests run on the local cluster's previous generation
// (make test-compat): Kubernetes 1.32, Kueue v0.17.0, Trainer v2.2.0, mpi-operator v0.7.0,
// training-operator v1.8.1.
func previousGeneration() bool {
	return os.Getenv(cluster.GenerationEnv) == cluster.Previous
}

// testKueueRelease is the Kueue release whose rules the tests' cluster follows.
func testKueueRelease() kueue.Release {
	if previousGeneration() {
		return kueue.V017
	}
	return kueue.Current
}

// checkGeneration fails a test whose cluster is not of the generation TRAINING_CLUSTER_GENERATION
// names (a cluster named by TRAINING_TEST_KUBECONFIG and a variable that disagree), by the API
// server's minor version.
func checkGeneration(t *testing.T, a *api) {
	t.Helper()
	v, err := a.kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	want := jobs.Minor(jobs.TestedKubernetes.Current)
	if previousGeneration() {
		want = jobs.Minor(jobs.TestedKubernetes.Previous)
	}
	if v.Major+"."+v.Minor != want {
		t.Fatalf("the cluster runs Kubernetes %s, but %s=%q asks for %s", v.GitVersion, cluster.GenerationEnv, os.Getenv(cluster.GenerationEnv), want)
	}
}

// What an operator of the previous generation lacks is refused at plan, naming the operator, the
// release that has it and what to do, and nothing is made; on the current generation the same
// configuration plans. The same field written past the plan (by a client that skipped it) is
// refused by the API server's strict field validation, which the provider asks for, and the
// error says why; on the current generation it is written.
//
// The field: terminationGracePeriodSeconds in a TrainJob's runtime patch (a TrainJob's
// termination_grace_period_seconds, and checkpoint's), which Trainer v2.2.0 drops.
func TestAccCompat_whatAnOlderOperatorLacksIsRefusedAtPlan(t *testing.T) {
	a := newAPI(t)
	checkGeneration(t, a)
	name := acctest.RandomWithPrefix("tf-acc-compat")
	config := providerConfig() + torchRuntime(name) + fmt.Sprintf(`
resource "training_train_job" "test" {
  name                             = %q
  runtime                          = training_runtime.torch.name
  num_nodes                        = 2
  tolerations                      = ["gpu_node"]
  termination_grace_period_seconds = 300
}
`, name)
	nothingMade := func(*terraform.State) error {
		if _, err := a.get(jobs.Train.GVR, "default", name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the TrainJob after a refused plan: %v", err)
		}
		if _, err := a.get(jobs.ClusterTrainingRuntimeGVR, "", name+"-rt"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the runtime after a refused plan: %v", err)
		}
		return nil
	}
	step := resource.TestStep{Config: config, PlanOnly: true, ExpectNonEmptyPlan: true}
	if previousGeneration() {
		step = resource.TestStep{Config: config, ExpectError: regexp.MustCompile(
			`(?s)Kubeflow Trainer on the cluster is older than\s+termination_grace_period_seconds needs.*` +
				`has\s+no\s+field\s+spec\.runtimePatches\[\*\]\..*terminationGracePeriodSeconds.*Kubeflow\s+Trainer\s+added\s+it\s+in\s+v2\.3\.0.*` +
				`Upgrade\s+Kubeflow\s+Trainer\s+to\s+v2\.3\.0\s+or\s+later,\s+or\s+remove\s+termination_grace_period_seconds\s+and\s+checkpoint`)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             nothingMade,
		Steps:                    []resource.TestStep{step},
	})

	// Past the plan: the provider's client writes with strict field validation.
	client := kube.NewClient(kube.Settings{ConfigPath: clustertest.Kubeconfig()})
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": jobs.Train.GVR.GroupVersion().String(), "kind": "TrainJob",
		"metadata": map[string]any{"name": name + "-direct", "namespace": "default"},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": "torch-distributed"},
			"suspend":    true,
			"runtimePatches": []any{map[string]any{"manager": "example.com/test", "trainingRuntimeSpec": map[string]any{
				"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{
					"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
						"terminationGracePeriodSeconds": int64(300)}}}}}}}}}}},
		},
	}}
	target := kube.Target{GVR: jobs.Train.GVR, Kind: "TrainJob", Namespace: "default", Name: name + "-direct"}
	_, err := client.Create(context.Background(), target, obj, func(*unstructured.Unstructured) error { return errors.New("not adopted") })
	var unknown *kube.UnknownFieldError
	switch {
	case previousGeneration() && !errors.As(err, &unknown):
		t.Errorf("a TrainJob with a field Trainer v2.2.0 lacks, written strictly: %v, want the API server's refusal explained", err)
	case previousGeneration() && !regexp.MustCompile(`unknown field.*terminationGracePeriodSeconds.*Kubeflow Trainer on the cluster is older than v2\.3\.0`).MatchString(err.Error()):
		t.Errorf("the refusal does not say what and why: %v", err)
	case !previousGeneration() && err != nil:
		t.Errorf("the same TrainJob on the current generation: %v", err)
	}
	if err == nil {
		_ = a.dyn.Resource(jobs.Train.GVR).Namespace("default").Delete(context.Background(), name+"-direct", metav1.DeleteOptions{})
	}
}

// A job whose queue MultiKueue dispatches to worker clusters needs an operator here that leaves
// it to them: on the previous generation, training-operator v1.8.1 (no runPolicy.managedBy) and
// Trainer v2.2.0 (which runs a TrainJob MultiKueue manages) fail the plan on queue_name, naming
// the operator and the release needed, and nothing of the jobs is made; on the current one the
// same jobs plan.
func TestAccCompat_aJobMultiKueueDispatchesNeedsAnOperatorThatLeavesItToTheWorkers(t *testing.T) {
	a := newAPI(t)
	checkGeneration(t, a)
	prefix := acctest.RandomWithPrefix("tf-acc-compat-mk")
	queues := providerConfig() + fmt.Sprintf(`
resource "training_multikueue_cluster" "w" {
  name              = "%[1]s-w"
  kubeconfig_secret = "%[1]s-none"
}

resource "training_multikueue_config" "fleet" {
  name     = "%[1]s-fleet"
  clusters = [training_multikueue_cluster.w.name]
}

resource "training_admission_check" "fleet" {
  name              = "%[1]s-fleet"
  multikueue_config = training_multikueue_config.fleet.name
}

resource "training_resource_flavor" "f" {
  name = "%[1]s-f"
}

resource "training_cluster_queue" "fleet" {
  name             = "%[1]s-fleet"
  admission_checks = [training_admission_check.fleet.name]
  resource_group {
    covered_resources = ["cpu", "nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.f.name
      resource {
        name          = "cpu"
        nominal_quota = "64"
      }
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "16"
      }
    }
  }
}

resource "training_local_queue" "fleet" {
  name          = "%[1]s-fleet"
  cluster_queue = training_cluster_queue.fleet.name
}
`, prefix)
	jobsConfig := queues + fmt.Sprintf(`
resource "training_pytorch_job" "test" {
  name         = "%[1]s-pt"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 1
  gpus         = 1
  tolerations  = ["gpu_node"]
  queue_name   = training_local_queue.fleet.name
}

resource "training_train_job" "test" {
  name        = "%[1]s-tj"
  runtime     = "torch-distributed"
  num_nodes   = 1
  tolerations = ["gpu_node"]
  queue_name  = training_local_queue.fleet.name
}
`, prefix)
	jobsStep := resource.TestStep{Config: jobsConfig, PlanOnly: true, ExpectNonEmptyPlan: true}
	if previousGeneration() {
		older := func(operator, since, kind, field string) string {
			return operator + ` on the cluster is older than MultiKueue needs.*` + since + `.*` + kind + `\s+schema\s+has\s+no\s+` + regexp.QuoteMeta(field)
		}
		pytorch := older("training-operator", `v1\.9\.0`, "PyTorchJob", "spec.runPolicy.managedBy")
		trainer := older("Kubeflow Trainer", `v2\.3\.0`, "TrainJob", "spec.runtimePatches[*]")
		jobsStep = resource.TestStep{Config: jobsConfig, ExpectError: regexp.MustCompile(
			`(?s)(` + pytorch + `.*` + trainer + `|` + trainer + `.*` + pytorch + `)`)}
	}
	noJobs := func(*terraform.State) error {
		for _, j := range []struct {
			kind *jobs.Kind
			name string
		}{{jobs.PyTorch, prefix + "-pt"}, {jobs.Train, prefix + "-tj"}} {
			if _, err := a.get(j.kind.GVR, "default", j.name); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s %s: %v", j.kind.Object, j.name, err)
			}
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: queues},
			jobsStep,
			{Config: queues, Check: noJobs},
		},
	})
}

// What Trainer v2.2.0 does otherwise than v2.3.0 with what the provider writes is warned of at
// plan on the previous generation, and only there: a TrainJob's resources replace its runtime's
// instead of merging in (the warning names the attribute), and a change of a runtime in place
// reaches the TrainJobs made from it (no runtime snapshot).
func TestAccCompat_whatAnOlderTrainerDoesOtherwiseIsWarnedOfAtPlan(t *testing.T) {
	a := newAPI(t)
	checkGeneration(t, a)
	name := acctest.RandomWithPrefix("tf-acc-compat-tr")
	config := func(image string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_runtime" "torch" {
  name      = "%[1]s-rt"
  framework = "torch"
  image     = %[2]q
  command   = ["torchrun", "/train.py"]
  memory    = "4Gi"
}

resource "training_train_job" "test" {
  name        = %[1]q
  runtime     = training_runtime.torch.name
  num_nodes   = 1
  gpus        = 1
  tolerations = ["gpu_node"]
  wait_for    = "created"
}
`, name, image)
	}
	w := newWorkspace(t)
	t.Cleanup(func() {
		w.run("destroy", "-auto-approve", "-input=false")
		namedJobsGone(t, a, jobs.Train, name)
	})
	// The runtime first, so that the job's plan reads it; then the job's plan, then a change of
	// the runtime in place.
	w.write(config("pytorch/pytorch:2.5.1"))
	w.run("apply", "-auto-approve", "-input=false", "-target=training_runtime.torch")
	created := planDiagnostics(t, w.run("plan", "-json", "-input=false"))
	w.run("apply", "-auto-approve", "-input=false")
	w.write(config("pytorch/pytorch:2.6.0"))
	said := planDiagnostics(t, w.run("plan", "-json", "-input=false"))
	resources := fmt.Sprint(created["training_train_job.test"])
	runtime := fmt.Sprint(said["training_runtime.torch"])
	replaces := strings.Contains(resources, "Kubeflow Trainer on the cluster replaces the runtime's resources with the job's")
	reaches := strings.Contains(runtime, "applies runtime "+name+"-rt's change to its TrainJobs")
	if previousGeneration() != replaces || previousGeneration() != reaches {
		t.Errorf("on the %s generation, the plan warns of replaced resources: %v, of a runtime change reaching its jobs: %v:\n%v\n%v",
			map[bool]string{true: "previous", false: "current"}[previousGeneration()], replaces, reaches, created, said)
	}
}
