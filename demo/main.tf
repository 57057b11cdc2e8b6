# The demo's configuration: the Arena walkthrough's MPI job on the ssd_node node,
# FrameworkController's elastic PyTorch example, and a Kubeflow Trainer v2 TrainJob on a
# training runtime the platform team publishes, on the local cluster. With training_image set
# (the local cluster's real node), the elastic job trains for real there: a small data-parallel
# program that checkpoints to a claim its pods share and goes on after each rescale.
terraform {
  required_providers {
    training = {
      source  = "kubetrain/training"
      version = "~> 0.1"
    }
  }
}

variable "kubeconfig" {
  type = string
}

variable "elastic_workers" {
  type    = number
  default = 4
}

# The real node's training image (with python-etcd, which the etcd rendezvous needs), or "" to
# run the example's job on the simulated GPU nodes.
variable "training_image" {
  type    = string
  default = ""
}

locals {
  real = var.training_image != ""
}

provider "training" {
  config_path = var.kubeconfig
}

resource "training_mpi_job" "mpi_dist" {
  name         = "mpi-dist"
  image        = "registry.cn-hangzhou.aliyuncs.com/tensorflow-samples/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5"
  command      = ["mpirun", "python", "/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py", "--model", "resnet101", "--batch_size", "64", "--variable_update", "horovod"]
  worker_count = 1
  gpus         = 1
  tolerations  = ["ssd_node"]
}

resource "training_elastic_job" "pet" {
  name     = "pet"
  image    = local.real ? var.training_image : "torchelastic/examples:0.2.0"
  launcher = local.real ? "torchrun" : "torchelastic"
  script   = local.real ? "/opt/kubetrain/elastic_train.py" : "/workspace/examples/imagenet/main.py"
  script_args = local.real ? ["--checkpoint=/checkpoint", "--step-seconds=0.5"] : [
    "--arch=resnet18", "--batch-size=32", "--epochs=2", "/workspace/data/tiny-imagenet-200"
  ]
  worker_count  = var.elastic_workers
  elastic       = { min_workers = 1, max_workers = 4 }
  gpus          = local.real ? 0 : 1
  tolerations   = local.real ? ["training.kubetrain.io/real-node"] : ["gpu_node"]
  node_selector = local.real ? { "training.kubetrain.io/real-node" = "true" } : null
  data_volumes  = local.real ? ["pet-checkpoint:/checkpoint"] : null
  # The etcd is a CPU helper with a placement of its own; every node here is tainted.
  roles = {
    etcd = {
      tolerations   = local.real ? ["training.kubetrain.io/real-node"] : ["gpu_node"]
      node_selector = local.real ? { "training.kubetrain.io/real-node" = "true" } : null
    }
  }
}

# The platform team's blueprint: a ClusterTrainingRuntime for torchrun.
resource "training_runtime" "torch" {
  name      = "torch-demo"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command   = ["torchrun", "/workspace/train.py"]
}

# A practitioner's TrainJob on it: 2 nodes x 1 GPU on the GPU nodes.
resource "training_train_job" "finetune" {
  name        = "finetune"
  runtime     = training_runtime.torch.name
  command     = ["torchrun", "/workspace/train.py", "--epochs", "3"]
  num_nodes   = 2
  gpus        = 1
  tolerations = ["gpu_node"]
}

# Like the instance table of `arena get`.
output "instances" {
  value = join("\n", concat(
    [format("%-10s %-10s %-32s %-9s %-24s %s", "JOB", "STATUS", "INSTANCE", "ROLE", "STATE", "NODE")],
    [for i in training_mpi_job.mpi_dist.instances : format("%-10s %-10s %-32s %-9s %-24s %s", training_mpi_job.mpi_dist.name, training_mpi_job.mpi_dist.status, i.name, i.role, i.phase, i.node)],
    [for i in training_elastic_job.pet.instances : format("%-10s %-10s %-32s %-9s %-24s %s", training_elastic_job.pet.name, training_elastic_job.pet.status, i.name, "${i.role}-${i.index}", i.phase, i.node)],
    [for i in training_train_job.finetune.instances : format("%-10s %-10s %-32s %-9s %-24s %s", training_train_job.finetune.name, training_train_job.finetune.status, i.name, "${i.role}-${i.index}", i.phase, i.node)],
  ))
}
