package provider

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
)

// invalidInput is one bad configuration: the resource block and what its error must say, the
// attribute and the rule (Terraform quotes the attribute's line of configuration with the error).
type invalidInput struct {
	block string
	want  string
}

// badMPI is a valid MPI job with extra's attributes set in place of the defaults.
func badMPI(extra string) string {
	block := "resource \"training_mpi_job\" \"bad\" {\n"
	for _, line := range []string{`name = "bad"`, `image = "registry.example/horovod:0.13.11"`, `command = ["mpirun", "python", "/train.py"]`, `worker_count = 1`} {
		key, _, _ := strings.Cut(line, " ")
		if !regexp.MustCompile(`(?m)^\s*` + key + `\s*=`).MatchString(extra) {
			block += "  " + line + "\n"
		}
	}
	return block + extra + "\n}\n"
}

func badElastic(name string, workers, minWorkers, maxWorkers int, extra string) string {
	return fmt.Sprintf(`resource "training_elastic_job" "bad" {
  name         = %q
  image        = "torchelastic/examples:0.2.0"
  script       = "/workspace/train.py"
  worker_count = %d
  elastic      = { min_workers = %d, max_workers = %d }
%s
}
`, name, workers, minWorkers, maxWorkers, extra)
}

func badPyTorch(extra string) string {
	block := "resource \"training_pytorch_job\" \"bad\" {\n  name    = \"bad\"\n  image   = \"pytorch/pytorch:2.5.1\"\n  command = [\"torchrun\", \"train.py\"]\n"
	if !strings.Contains(extra, "worker_count") {
		block += "  worker_count = 2\n"
	}
	return block + extra + "\n}\n"
}

func badTF(extra string) string {
	return `resource "training_tf_job" "bad" {
  name    = "bad"
  image   = "tensorflow/tensorflow:2.15.0"
  command = ["python", "/train.py"]
` + extra + "\n}\n"
}

// pattern matches the error in either order of its parts (ATTRIBUTE.*RULE), with Terraform's
// line wrapping.
func (c invalidInput) pattern() *regexp.Regexp {
	want := strings.ReplaceAll(c.want, " ", `\s+`)
	if first, second, ok := strings.Cut(want, ".*"); ok {
		want = first + ".*" + second + "|" + second + ".*" + first
	}
	return regexp.MustCompile(`(?s)` + want)
}

var invalidInputs = []invalidInput{
	// Names.
	{badMPI(`  name = "Bad_Name"`), `name = "Bad_Name".*Invalid job name`},
	{badMPI(`  name = "` + strings.Repeat("a", 60) + `"`), `Invalid job name.*at most 48 are allowed`},
	{badElastic("pet-job", 2, 1, 4, ""), `name\s+= "pet-job".*no hyphens`},
	{badElastic("Pet", 2, 1, 4, ""), `name\s+= "Pet".*no hyphens`},
	// An elastic job's name, by the longest Service name it derives (NAME-worker; NAME-tensorboard with one).
	{badElastic(strings.Repeat("a", 57), 2, 1, 4, ""), `Invalid job name.*"` + strings.Repeat("a", 57) + `-worker" would have 64 characters`},
	{badElastic(strings.Repeat("b", 52), 2, 1, 4, "  tensorboard = { log_dir = \"/logs\" }"), `Invalid job name.*-tensorboard" would have 64 characters`},
	// Blank names of images, scripts, directories and queues.
	{badMPI(`  image = "  "`), `image = "  ".*empty or only spaces`},
	{badMPI(`  image = " horovod"`), `image = " horovod".*starts or ends with spaces`},
	{badMPI(`  queue_name = ""`), `queue_name = "".*empty or only spaces`},
	{badElastic("elastic", 2, 1, 4, `  roles = { etcd = { image = " " } }`), `image.*empty or only spaces`},
	{badMPI("  tensorboard = { log_dir = \" \" }"), `tensorboard\.log_dir: " " is empty or only spaces`},
	{badMPI(`  namespace = "Not_A_Namespace"`), `namespace = "Not_A_Namespace".*Invalid namespace`},
	{badMPI(`  priority_class_name = "Bad_Class"`), `priority_class_name = "Bad_Class".*Invalid object name`},
	{badMPI(`  roles = { launcher = { priority_class_name = "Bad_Class" } }`), `priority_class_name.*Invalid object name`},
	// Waits.
	{badMPI(`  fail_fast = "sometimes"`), `fail_fast = "sometimes".*value must be one of`},
	{badMPI(`  min_running_seconds = -1`), `min_running_seconds = -1.*value must be between 0 and 3600`},
	// Counts and bounds.
	{badMPI(`  worker_count = 0`), `worker_count = 0.*worker_count value must be between 1 and 10000`},
	{badTF(`  worker_count = 20000`), `worker_count = 20000.*worker_count value must be between 1 and 10000`},
	{badTF("  worker_count = 1\n  ps_count = -1"), `ps_count = -1.*ps_count value must be`},
	{badElastic("elastic", 5, 1, 4, ""), `worker_count \(5\) must be within min_workers \(1\) and max_workers \(4\)`},
	{badElastic("elastic", 2, 3, 4, ""), `worker_count \(2\) must be within min_workers \(3\)`},
	{badElastic("elastic", 2, 5, 4, ""), `min_workers \(5\) must not exceed max_workers \(4\)`},
	{badElastic("elastic", 2, 1, 20000, ""), `max_workers value must be between 1 and 10000`},
	{badMPI(`  ttl_seconds_after_finished = -1`), `ttl_seconds_after_finished = -1.*must be at least 0`},
	{badMPI(`  active_deadline_seconds = 0`), `active_deadline_seconds = 0.*must be at least 1`},
	// Quantities and GPUs.
	{badMPI(`  cpu = "four"`), `cpu = "four".*"four" is not a Kubernetes quantity`},
	{badMPI(`  memory = "-1Gi"`), `memory = "-1Gi".*must be greater than zero`},
	{badElastic("elastic", 2, 1, 4, `  shm_size = "lots"`), `shm_size = "lots".*is not a Kubernetes quantity`},
	{badElastic("elastic", 2, 1, 4, `  security_context = { seccomp_profile = "RuntimeDefault" }`), `security_context.seccomp_profile is not supported on an elastic job.*FrameworkController v1.0.1 makes its pods with Kubernetes 1.16's types, which have no seccompProfile`},
	{badMPI(`  gpus = -1`), `gpus = -1.*gpus value must be between 0 and 64`},
	{badMPI(`  gpus = 65`), `gpus = 65.*gpus value must be between 0 and 64`},
	{badMPI(`  gpu_resource_name = "gpu"`), `gpu_resource_name = "gpu".*must be a domain-prefixed extended resource name`},
	{badMPI(`  gpu_resource_name = "nvidia.com/bad gpu"`), `gpu_resource_name = "nvidia.com/bad gpu".*Invalid GPU resource name`},
	// Toleration strings (Arena's grammar) and blocks.
	{badMPI(`  tolerations = ["gpu_node=invalid:NoSchedul"]`), `tolerations = \["gpu_node=invalid:NoSchedul"\].*effect "NoSchedul" is not one of`},
	{badMPI(`  tolerations = [":NoSchedule"]`), `tolerations = \[":NoSchedule"\].*empty taint key`},
	{badMPI(`  tolerations = ["gpu_node="]`), `tolerations = \["gpu_node="\].*empty value`},
	{badMPI(`  tolerations = ["bad key"]`), `tolerations = \["bad key"\].*taint key "bad key" is invalid`},
	{badMPI(`  tolerations = ["All"]`), `tolerations = \["All"\].*in lower case`},
	{badMPI(`  tolerations = ["gpu_node=invalid:NoSchedule:Exists"]`), `tolerations.*operator Exists takes no value`},
	{badMPI(`  tolerations = ["gpu_node:NoSchedule:Exists:60"]`), `tolerations.*only with the NoExecute effect`},
	// Toleration blocks the API server would refuse in every pod.
	// Environment, labels and selectors.
	{badMPI(`  env = { "1BAD" = "x" }`), `env = \{ "1BAD" = "x" \}.*Invalid environment variable name`},
	{badMPI(`  env = { "A=B" = "x" }`), `env = \{ "A=B" = "x" \}.*Invalid environment variable name`},
	{badMPI("  env = { A = \"1\" }\n  env_secret = { A = { secret = \"s\", key = \"k\" } }"), `env_secret.*A is also set in env`},
	{badMPI(`  env_secret = { TOKEN = { secret = "s", key = "bad key" } }`), `Invalid Secret key.*"bad key": a valid config key`},
	{badMPI(`  labels = { "a b" = "c" }`), `labels = \{ "a b" = "c" \}.*Invalid label or annotation key`},
	{badMPI(`  node_selector = { "accelerator" = "bad value!" }`), `node_selector = \{ "accelerator" = "bad value!" \}.*Invalid label value`},
	{badMPI(`  queue_name = "bad queue"`), `queue_name = "bad queue".*Invalid label value`},
	// Volumes.
	{badMPI(`  data_volumes = ["no-path"]`), `data_volumes = \["no-path"\].*not of the form PVC_NAME:/MOUNT/PATH`},
	{badMPI(`  data_volumes = ["data:relative/path"]`), `data_volumes = \["data:relative/path"\].*must be an absolute, clean path`},
	{badMPI(`  data_volumes = ["Bad_Claim:/data"]`), `data_volumes = \["Bad_Claim:/data"\].*claim name "Bad_Claim" is invalid`},
	// Enumerations.
	{badMPI(`  clean_pod_policy = "Sometimes"`), `clean_pod_policy = "Sometimes".*value must be one of`},
	{badMPI(`  wait_for = "finished"`), `wait_for = "finished".*value must be one of`},
	{badMPI(`  image_pull_policy = "Sometimes"`), `image_pull_policy = "Sometimes".*value must be one of`},
	{`resource "training_node_taint" "bad" {
  node   = "cn-beijing.192.168.3.228"
  key    = "maintenance"
  effect = "NoSchedul"
}
`, `effect = "NoSchedul".*value must be one of`},
	// Conflicting attributes.
	{badElastic("elastic", 2, 1, 4, `  worker_command = ["torchrun", "train.py"]`), `Invalid Attribute Combination.*script`},
	// What the program in the job could not run with.
	{badTF("  worker_count = 2\n  ps_count = 1\n  chief = true\n  dynamic_workers = true"), `dynamic_workers.*a chief needs the whole cluster in its TF_CONFIG`},
	{badTF("  worker_count = 2\n  dynamic_workers = true"), `dynamic_workers.*dynamic workers need parameter servers`},
	{badMPI("  worker_count = 5\n  elastic = {\n    min_workers = 1\n    max_workers = 4\n  }"), `worker_count \(5\) must be within min_workers \(1\) and max_workers \(4\)`},
	{badMPI("  elastic = {\n    min_workers = 3\n    max_workers = 2\n  }"), `min_workers \(3\) must not exceed max_workers \(2\)`},
	{badElastic("elastic", 2, 1, 4, `  roles = { etcd = { image = "quay.io/coreos/etcd:v3.6.8" } }`), `roles\["etcd"\].*no longer serves the v2 API`},
	{badElastic("elastic", 2, 1, 4, `  launcher = "deepspeed"`), `launcher = "deepspeed".*value must be one of`},
	{badPyTorch("  worker_count = 5\n  elastic = {\n    min_workers = 1\n    max_workers = 4\n  }"), `worker_count \(5\) must be within min_workers \(1\) and max_workers \(4\)`},
	{badPyTorch("  elastic = {\n    min_workers = 1\n    max_workers = 4\n    rendezvous_backend = \"etcd-v2\"\n  }"), `elastic\.rendezvous_endpoint: the etcd-v2 rendezvous backend needs the host:port of an etcd server`},
	{badPyTorch("  elastic = {\n    min_workers = 1\n    max_workers = 4\n    rendezvous_endpoint = \"etcd\"\n  }"), `elastic\.rendezvous_endpoint: rendezvous endpoint "etcd" is not host:port`},
	// What the operators' CRD rules and webhooks refuse (Kueue v0.19.2, Trainer v2.3.0).
	{badClusterQueue("", "  preemption {\n    borrow_within_cohort = \"LowerPriority\"\n  }"), `Invalid ClusterQueue.*borrow_within_cohort = "LowerPriority" needs reclaim_within_cohort other than "Never"`},
	{badClusterQueue(`        lending_limit = "3"`, `  cohort = "team"`), `Invalid ClusterQueue.*lending_limit 3 is more than nominal_quota 2`},
	{`resource "training_resource_flavor" "bad" {
  name        = "bad"
  node_taints = ["gpu=a:NoSchedule", "gpu=b:NoSchedule"]
}
`, `Invalid ResourceFlavor.*unique by key and effect`},
	{`resource "training_runtime" "bad" {
  name      = "bad"
  framework = "mpi"
  image     = "mpi:1"
  mpi = {
    implementation = "Intel"
  }
}
`, `mpi\.implementation value must be one of: \["OpenMPI"\], got: "Intel"`},
	// Extended resources beside the GPUs: domain-prefixed names, whole devices, not the GPUs'.
	{badMPI("  pod_patch = { worker = <<-EOT\n    spec:\n      volumes:\n        - name: v\n          nfsv4: {server: nas}\n    EOT\n  }"), `Invalid pod patch.*unknown field "spec.volumes\[0\].nfsv4"`},
	{badMPI("  pod_patch = { worker = yamlencode({ spec = { hostIPC = \"yes\" } }) }"), `Invalid pod patch.*hostIPC`},
	{badMPI("  pod_patch = { worker = yamlencode({ metadata = { annotations = { owner = \"ml\" } } }) }"), `Invalid pod patch.*metadata: a pod patch changes the pods' spec; set their labels and annotations with the labels and annotations attributes`},
	{badMPI("  pod_patch = { worker = yamlencode({ spec = { containers = [{ name = \"trainer\", image = \"x\" }, { name = \"worker\", \"$patch\" = \"delete\" }] } }) }"), `pod_patch\["worker"\].*the first container must stay "worker"`},
	{badMPI("  pod_patch = { master = yamlencode({ spec = { hostIPC = true } }) }"), `pod_patch\["master"\].*this job has no role "master"; its roles are launcher, worker`},
	{badMPI("  roles = { master = { cpu = \"1\" } }"), `roles\["master"\].*this job has no role "master"; its roles are launcher, worker`},
	{badMPI("  roles = { launcher = { memory = \"lots\" } }"), `Invalid Kubernetes quantity.*"lots" is not a Kubernetes quantity`},
	{badMPI(`  ssh_auth_mount_path = "home/mpiuser/.ssh"`), `ssh_auth_mount_path.*"home/mpiuser/.ssh" must be an absolute, clean path`},
	{badMPI(`  security_context = { run_as_user = -1 }`), `security_context: run_as_user -1 is negative`},
	{badMPI(`  security_context = { run_as_non_root = true, run_as_user = 0 }`), `security_context.*run_as_non_root with run_as_user 0`},
	{badPyTorch(`  security_context = { seccomp_profile = "runtime/default" }`), `security_context: seccomp profile "runtime/default" is not one of RuntimeDefault, Unconfined, localhost/PATH`},
	{badPyTorch(`  termination_grace_period_seconds = -1`), `termination_grace_period_seconds = -1.*value must be at least 0`},
	{badPyTorch(`  scheduler_name = "Volcano Scheduler"`), `scheduler_name = "Volcano Scheduler"`},
	{badMPI(`  topology_spread = [{ topology_key = "rack", when_unsatisfiable = "Never" }]`), `when_unsatisfiable.*value must be one of`},
	{badMPI(`  topology_spread = [{ topology_key = "rack", max_skew = 0 }]`), `max_skew.*value must be between 1`},
	{badTF("  worker_count = 1\n  topology_spread = [{ topology_key = \"not a key!\" }]"), `"not a key!": name part must consist`},
	{badPyTorch(`  topology_spread = [{ topology_key = "rack" }, { topology_key = "rack", max_skew = 2 }]`), `rack with DoNotSchedule is given twice`},
	{badMPI(`  gang_scheduling = { min_available = 0 }`), `gang_scheduling.min_available value must be between 1`},
	{badPyTorch(`  gang_scheduling = { schedule_timeout_seconds = 0 }`), `schedule_timeout_seconds.*value must be between 1`},
	{badTF(`  worker_count = 1
  security_context = { drop_capabilities = ["CAP_NET_RAW"] }`), `security_context.*capability "CAP_NET_RAW".*without CAP_`},
	{badMPI(`  extended_resources = { "hca" = "1" }`), `extended_resources.*must be a domain-prefixed extended resource name`},
	{badMPI(`  extended_resources = { "example.kubernetes.io/dev" = "1" }`), `extended_resources.*in Kubernetes' own domain`},
	{badPyTorch(`  checkpoint = { path = "/ckpt", save_seconds = 30 }`), `Checkpoint on no volume.*checkpoint.path /ckpt is on none of data_volumes`},
	{badPyTorch("  checkpoint = { path = \"/ckpt/run\", save_seconds = 30 }\n  pod_patch = { worker = yamlencode({ spec = { volumes = [{ name = \"c\", emptyDir = {} }], containers = [{ name = \"pytorch\", volumeMounts = [{ name = \"c\", mountPath = \"/ckpt\" }] }] } }) }"),
		`Checkpoint lost with the pods.*checkpoint.path /ckpt/run is on an emptyDir at /ckpt \(deleted with its pod\)`},
	{badMPI("  data_volumes = [\"ckpt:/ckpt\"]\n  checkpoint = { path = \"/ckpt\", save_seconds = 30 }\n  env = { TRAINING_CHECKPOINT_PATH = \"/elsewhere\" }"),
		`Variable set by checkpoint.*TRAINING_CHECKPOINT_PATH is what checkpoint sets in the pods`},
	{badTF("  worker_count = 1\n  data_volumes = [\"ckpt:/ckpt\"]\n  checkpoint = { path = \"ckpt/run\", save_seconds = 30 }"), `checkpoint path "ckpt/run" must be an absolute, clean path`},
	{badMPI("  data_volumes = [\"ckpt:/ckpt\"]\n  checkpoint = { path = \"/ckpt\", save_seconds = 0 }"), `save_seconds value must be between 1 and 86400`},
	{badMPI("  data_volumes = [\"ckpt:/ckpt\"]\n  checkpoint = { path = \"/ckpt/run\", save_seconds = 60 }\n  termination_grace_period_seconds = 100"),
		`Grace too short for the checkpoint.*termination_grace_period_seconds \(100\) is shorter than the 130 seconds`},
	{badMPI(`  extended_resources = { "rdma/hca" = "0.5" }`), `extended_resources.*"0.5" is not a whole number of at least 1`},
	{badMPI("  gpus = 1\n  extended_resources = { \"nvidia.com/gpu\" = \"1\" }"), `GPUs given as an extended resource.*set gpus instead`},
	// A runtime's and a TrainJob's rules, which need no cluster (Trainer v2.3.0's API).
	{`resource "training_runtime" "bad" {
  name      = "bad"
  framework = "torch"
  image     = "pytorch:2"
  mpi = {}
}
`, `MPI policy without the MPI framework.*mpi needs framework = "mpi", not "torch"`},
	{`resource "training_runtime" "bad" {
  name      = "bad"
  framework = "jax"
  image     = "jax:1"
}
`, `framework = "jax".*value must be one of`},
	{badTrainJob(`  priority_class_name = "high"`), `An argument named "priority_class_name" is not expected here`},
	{badTrainJob("  tensorboard = { log_dir = \"/logs\" }"), `An argument named "tensorboard" is not expected here`},
	{badTrainJob(`  runtime_kind = "Runtime"`), `runtime_kind = "Runtime".*value must be one of`},
	{badTrainJob(`  num_nodes = 0`), `num_nodes = 0.*value must be between 1 and 10000`},
	{badTrainJob("  queue_name = \"team\"\n  suspend = true"), `A queued job is suspended by Kueue`},
	{badTrainJob(`  wait_for = "admitted"`), `Nothing to admit.*needs queue_name`},
	// The queues of one configuration, checked as a whole (Kueue v0.19.2's flavor assignment).
	{gpuOnlyQueue("  roles = { launcher = { cpu = \"1\" } }"), `Kueue would never admit MPIJob default/bad in ClusterQueue bad-gpus.*resource cpu unavailable in ClusterQueue`},
	{gpuOnlyQueue("  worker_count = 5"), `Kueue would never admit MPIJob default/bad in ClusterQueue bad-gpus.*maximum capacity \(4\)`},
	// Topology Aware Scheduling (Kueue v0.19.2's Topology and ResourceFlavor rules, its pod-set annotations).
	{badMPI(`  required_topology = { worker = "example.com/block" }`), `Topology without a queue.*needs queue_name`},
	{badElastic("elastic", 2, 1, 4, `  preferred_topology = { worker = "example.com/block" }`), `An argument named "preferred_topology" is not expected here`},
	{badMPI("  queue_name = \"team\"\n  required_topology = { worker = \"example.com/block\" }\n  preferred_topology = { worker = \"example.com/rack\" }"),
		`preferred_topology\["worker"\].*required_topology's already`},
	{badMPI("  queue_name = \"team\"\n  required_topology = { master = \"example.com/block\" }"), `required_topology\["master"\].*this job has no role "master"`},
	{badTrainJob("  queue_name = \"team\"\n  required_topology = { node = \"example.com/block\" }"), `An argument named "required_topology" is not expected here`},
	{`resource "training_runtime" "bad" {
  name              = "bad"
  framework         = "torch"
  image             = "pytorch:2"
  required_topology = { worker = "example.com/block" }
}
`, `required_topology\["worker"\].*has no role "worker"; its roles are node`},
	{`resource "training_topology" "bad" {
  name   = "bad"
  levels = ["kubernetes.io/hostname", "example.com/rack"]
}
`, `Invalid Topology.*only as the lowest \(last\) level`},
	// MultiKueue (Kueue v0.19.2's CRD rules).
	{`resource "training_multikueue_config" "bad" {
  name     = "bad"
  clusters = ["east", "east"]
}
`, `(?s)Duplicate List Value.*duplicate values of: "east"`},
	{`resource "training_admission_check" "bad" {
  name              = "bad"
  multikueue_config = "Fleet"
}
`, `multikueue_config`},
	{`resource "training_multikueue_cluster" "bad" {
  name              = "bad"
  kubeconfig_secret = "East_Kubeconfig"
}
`, `Invalid MultiKueueCluster.*is not a Secret's name`},
	{`resource "training_resource_flavor" "bad" {
  name          = "bad"
  topology_name = "dc"
}
`, `Invalid ResourceFlavor.*topology_name "dc" needs node_labels`},
}

// gpuOnlyQueue is a flavor, a ClusterQueue of 4 GPUs in it (no cohort), a LocalQueue of it, and
// an MPI job of GPU workers queued there with extra's attributes.
func gpuOnlyQueue(extra string) string {
	return `resource "training_resource_flavor" "gpu" {
  name = "bad-gpu"
}

resource "training_cluster_queue" "gpus" {
  name = "bad-gpus"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "4"
      }
    }
  }
}

resource "training_local_queue" "team" {
  name          = "bad-team"
  cluster_queue = training_cluster_queue.gpus.name
}

` + badMPI("  gpus = 1\n  queue_name = training_local_queue.team.name\n"+extra)
}

// badTrainJob is a TrainJob of two nodes on Trainer's torch-distributed runtime with extra's
// attributes set (num_nodes replaced when extra sets it).
func badTrainJob(extra string) string {
	block := "resource \"training_train_job\" \"bad\" {\n  name    = \"bad\"\n  runtime = \"torch-distributed\"\n  image   = \"pytorch:2\"\n"
	if !strings.Contains(extra, "num_nodes") {
		block += "  num_nodes = 2\n"
	}
	return block + extra + "\n}\n"
}

// badClusterQueue is a ClusterQueue of 2 CPUs with quota added to its CPU resource block and
// extra to the queue's.
func badClusterQueue(quota, extra string) string {
	return fmt.Sprintf(`resource "training_cluster_queue" "bad" {
  name = "bad"
  resource_group {
    covered_resources = ["cpu"]
    flavor {
      name = "default"
      resource {
        name          = "cpu"
        nominal_quota = "2"
%s
      }
    }
  }
%s
}
`, quota, extra)
}

// Every configuration of the corpus fails at plan time with an error that names the attribute
// and the rule, and the API server receives no write for any of them: the provider reaches the
// API server through a counting proxy, and a real job it manages is in the state all along.
func TestAccInvalidConfigurationsFailAtPlanWithoutWrites(t *testing.T) {
	a := newAPI(t)
	proxy, kubeconfig := startProxy(t, apiproxy.Options{})
	existingName := mpiJobName()
	existing := fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig) +
		mpiJobBlock("existing", existingName, `  wait_for     = "created"`+"\n")
	steps := []resource.TestStep{{Config: existing}}
	for i, c := range invalidInputs {
		step := resource.TestStep{Config: existing + c.block, PlanOnly: true, ExpectError: c.pattern()}
		if i == 0 {
			step.PreConfig = func() {
				// The job was created through the proxy, so it sees the provider's requests.
				if proxy.Writes() == 0 {
					t.Error("the valid job was not created through the proxy: the test could not see a write")
				}
				proxy.ResetCounts()
			}
		}
		steps = append(steps, step)
	}
	// An invalid change to the existing job is refused as well, without touching it.
	steps = append(steps, resource.TestStep{
		Config:      strings.Replace(existing, "worker_count = 1", "worker_count = -3", 1),
		PlanOnly:    true,
		ExpectError: regexp.MustCompile(`(?s)worker_count = -3.*worker_count value must be between 1 and 10000`),
	}, resource.TestStep{
		// The last step: nothing was written while the bad plans were made (Terraform rejects
		// them while validating, before it even refreshes the job).
		PreConfig: func() {
			t.Logf("bad inputs: %d rejected at plan; API requests meanwhile: %d (%v)", len(invalidInputs)+1, proxy.Requests(), proxy.Counts())
			if w := proxy.Writes(); w != 0 {
				t.Errorf("the API server received %d writes while invalid configurations were planned: %v", w, proxy.Counts())
			}
		},
		Config: existing,
	})
	if len(invalidInputs) < 55 {
		t.Fatalf("the corpus has %d invalid configurations; CONTRIBUTING.md counts more", len(invalidInputs))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, existingName),
		Steps:                    steps,
	})
}

// The corpus needs no cluster: every configuration fails while Terraform validates it, before
// the provider would contact one (its kubeconfig names an address nothing listens on).
func TestInvalidConfigurationsFailWithoutACluster(t *testing.T) {
	provider := fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", unreachableKubeconfig(t))
	steps := make([]resource.TestStep, 0, len(invalidInputs))
	for _, c := range invalidInputs {
		if strings.HasPrefix(c.want, "Kueue would never admit") {
			// What Kueue counts of the job is its configuration's to say, which an unreachable
			// cluster does not show: the plan warns instead.
			continue
		}
		steps = append(steps, resource.TestStep{Config: provider + c.block, PlanOnly: true, ExpectError: c.pattern()})
	}
	// A second exec block is an error, not ignored.
	steps = append(steps, resource.TestStep{PlanOnly: true, Config: fmt.Sprintf(`provider "training" {
  config_path = %q
  exec {
    api_version = "client.authentication.k8s.io/v1"
    command     = "one"
  }
  exec {
    api_version = "client.authentication.k8s.io/v1"
    command     = "two"
  }
}
`, unreachableKubeconfig(t)) + badMPI(""), ExpectError: regexp.MustCompile(`(?s)exec.*at most 1`)})
	// Most steps fail within a tenth of a second; the few whose rule is checked at plan (a queued
	// job's, a ClusterQueue's) first wait out the client's retries against the unreachable
	// cluster, 17 to 26 s each. In parts that run side by side those waits overlap: the test took
	// 133 s in one part and 92 s in four.
	const parts = 4
	for i := range parts {
		part := steps[i*len(steps)/parts : (i+1)*len(steps)/parts]
		t.Run(fmt.Sprintf("part %d of %d", i+1, parts), func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{IsUnitTest: true, ProtoV6ProviderFactories: testProviderFactories, Steps: part})
		})
	}
}

// CONTRIBUTING.md's count of bad inputs is the count that runs: the corpus and the invalid change to
// a live job of TestAccInvalidConfigurationsFailAtPlanWithoutWrites.
func TestContributingCountsTheInvalidInputs(t *testing.T) {
	readme, err := os.ReadFile("../../CONTRIBUTING.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\| invalid configurations [^|]*\| (\d+) \|`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("CONTRIBUTING.md has no row counting the invalid configurations")
	}
	if got, want := string(m[1]), fmt.Sprint(len(invalidInputs)+1); got != want {
		t.Errorf("CONTRIBUTING.md counts %s invalid configurations; the tests run %s", got, want)
	}
}
