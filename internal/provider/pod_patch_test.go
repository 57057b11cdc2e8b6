package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// sidecarPodPatch is a worker patch as a platform team writes it: a native sidecar, a
// memory-backed scratch volume mounted in the worker's own container, and spreading the workers
// over the nodes.
const sidecarPodPatch = `  pod_patch = {
    worker = <<-EOT
      spec:
        initContainers:
          - name: log-shipper
            image: registry.example/fluent-bit:3
            restartPolicy: Always
        volumes:
          - name: scratch
            emptyDir: {medium: Memory}
        containers:
          - name: worker
            volumeMounts:
              - {name: scratch, mountPath: /scratch}
        topologySpreadConstraints:
          - maxSkew: 1
            topologyKey: kubernetes.io/hostname
            whenUnsatisfiable: ScheduleAnyway
            labelSelector: {matchLabels: {training.kubeflow.org/job-role: worker}}
    EOT
  }
  tolerations = ["gpu_node"]`

// sidecarYAML is the worker's patch of sidecarPodPatch, as Terraform reads the heredoc.
func sidecarYAML(t *testing.T) string {
	_, body, _ := strings.Cut(sidecarPodPatch, "<<-EOT\n")
	body, _, _ = strings.Cut(body, "    EOT")
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "      "))
	}
	if len(lines) < 5 {
		t.Fatal("no worker patch in sidecarPodPatch")
	}
	return strings.Join(lines, "\n") + "\n"
}

// A pod_patch reaches the pods mpi-operator makes (the worker's sidecar, volume, mount and
// spread, not the launcher), the plan after the apply is empty (the YAML read back is no
// change), an import reads a patch that means the same as the YAML, and an init container
// added to the job by hand shows as a change of pod_patch that replaces the job.
func TestAccPodPatch_aSidecarAndAVolumeReachTheOperatorsPodsAndReadBackExactly(t *testing.T) {
	a := newAPI(t)
	name := mpiJobName()
	config := mpiJobConfig(name, 2, sidecarPodPatch)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					for _, p := range a.pods("default", jobs.MPI.PodSelector(name)) {
						isWorker := p.Labels[jobs.JobRoleLabel] == "worker"
						sidecar := slices.ContainsFunc(p.Spec.InitContainers, func(c corev1.Container) bool {
							return c.Name == "log-shipper" && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
						})
						mounted := slices.ContainsFunc(p.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/scratch" })
						spread := len(p.Spec.TopologySpreadConstraints) == 1
						if isWorker != sidecar || isWorker != mounted || isWorker != spread {
							return fmt.Errorf("pod %s (worker %v): sidecar %v, /scratch %v, spread %v", p.Name, isWorker, sidecar, mounted, spread)
						}
					}
					return nil
				},
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				// The import reads the patch as JSON, which means what the configuration's YAML
				// does: a plan after it keeps the state's words (samePodPatches), no change.
				ResourceName: "training_mpi_job.test", ImportState: true, ImportStateId: "default/" + name,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					got := states[0].Attributes["pod_patch.worker"]
					if len(states) != 1 || !samePatch(got, sidecarYAML(t)) || states[0].Attributes["pod_patch.launcher"] != "" {
						return fmt.Errorf("the import's pod_patch does not mean the configuration's: %q", got)
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					patch := `[{"op": "add", "path": "/spec/mpiReplicaSpecs/Worker/template/spec/initContainers/-", "value": {"name": "fetch", "image": "busybox"}}]`
					if _, err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Patch(context.Background(), name, k8stypes.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionReplace),
				}},
			},
		},
	})
}

// A PyTorchJob master with an image, resources and a variable of its own (roles):
// training-operator's master pod has them and the workers the job's; the plan after the apply is
// empty, and an import gives the same state.
func TestAccRoles_aMasterOfItsOwnReachesItsPodsAndImportsExactly(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-pt")
	config := pytorchJobConfig(name, 1, `  cpu = "1"
  roles = {
    master = { image = "registry.example/master:1", cpu = "2", memory = "1Gi", env = { ROLE = "master" } }
  }
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					pods := a.pods("default", jobs.PyTorch.PodSelector(name))
					if len(pods) != 2 {
						return fmt.Errorf("%d pods, want a master and a worker", len(pods))
					}
					for _, p := range pods {
						c := p.Spec.Containers[0]
						variable := slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "ROLE" && e.Value == "master" })
						isMaster := strings.HasSuffix(p.Name, "-master-0")
						if isMaster != (c.Image == "registry.example/master:1") || isMaster != variable ||
							isMaster != (c.Resources.Limits.Cpu().String() == "2") {
							return fmt.Errorf("pod %s (master %v): image %s, cpu %s, ROLE %v", p.Name, isMaster, c.Image, c.Resources.Limits.Cpu(), variable)
						}
					}
					return nil
				},
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				ResourceName: "training_pytorch_job.test", ImportState: true, ImportStateId: "default/" + name, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
			},
		},
	})
}

// A runtime's pod_patch (a native sidecar and a volume mounted in the trainer's node container)
// reaches the pods of a TrainJob made from it; the plan after the apply is empty, and an import
// of the runtime gives the same state.
func TestAccRuntime_podPatchReachesItsTrainJobsPodsAndImportsExactly(t *testing.T) {
	a := newAPI(t)
	name := acctest.RandomWithPrefix("tf-acc-rtp")
	config := providerConfig() + fmt.Sprintf(`
resource "training_runtime" "torch" {
  name      = "%[1]s-rt"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1"
  command   = ["torchrun", "/train.py"]
  pod_patch = {
    node = jsonencode({ spec = {
      initContainers = [{ image = "registry.example/fluent-bit:3", name = "log-shipper", restartPolicy = "Always" }]
      volumes        = [{ emptyDir = {}, name = "logs" }]
      containers     = [{ name = "node", volumeMounts = [{ mountPath = "/logs", name = "logs" }] }]
    } })
  }
}

resource "training_train_job" "test" {
  name        = %[1]q
  runtime     = training_runtime.torch.name
  num_nodes   = 1
  tolerations = ["gpu_node"]
}
`, name)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					pods := a.pods("default", jobs.Train.PodSelector(name))
					if len(pods) != 1 {
						return fmt.Errorf("%d pods, want 1", len(pods))
					}
					p := pods[0]
					sidecar := slices.ContainsFunc(p.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == "log-shipper" })
					mounted := slices.ContainsFunc(p.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/logs" })
					if !sidecar || !mounted {
						return fmt.Errorf("pod %s: sidecar %v, /logs mounted %v", p.Name, sidecar, mounted)
					}
					return nil
				},
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				ResourceName: "training_runtime.torch", ImportState: true, ImportStateId: name + "-rt", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}
