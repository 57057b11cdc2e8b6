# EKS: a team's GPU quota and its first job, applied by the identity ../platform bound the
# provider's roles to. A managed node group's nodes carry the label eks.amazonaws.com/nodegroup
# with the group's name and exactly the taints the group is given
# (https://docs.aws.amazon.com/eks/latest/userguide/node-taints-managed-node-groups.html); AWS's
# GPU examples give nvidia.com/gpu:NoSchedule.

variable "cluster_name" {
  description = "The EKS cluster's name."
  type        = string
}

variable "region" {
  description = "The cluster's AWS region."
  type        = string
}

variable "endpoint" {
  description = "The cluster's endpoint, as for ../platform."
  type        = string
}

variable "ca_certificate" {
  description = "The cluster's CA, base64, as for ../platform."
  type        = string
}

variable "gpu_node_group" {
  description = "The managed node group of GPU nodes."
  type        = string
}

variable "gpu_taint_key" {
  description = "The key of the taint given to the GPU node group: every taint of that key is tolerated."
  type        = string
  default     = "nvidia.com/gpu"
}

variable "gpus" {
  description = "The team's GPU quota."
  type        = number
  default     = 4
}

provider "training" {
  host                   = var.endpoint
  cluster_ca_certificate = base64decode(var.ca_certificate)
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", var.cluster_name, "--region", var.region]
  }
}

# Kueue puts the pods it admits under this flavor on the group's nodes, tolerating its taint.
resource "training_resource_flavor" "gpu" {
  name        = var.gpu_node_group
  node_labels = { "eks.amazonaws.com/nodegroup" = var.gpu_node_group }
  tolerations = [var.gpu_taint_key]
}

resource "training_cluster_queue" "team" {
  name = "team"
  resource_group {
    covered_resources = ["cpu", "memory", "nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "cpu"
        nominal_quota = tostring(var.gpus * 8)
      }
      resource {
        name          = "memory"
        nominal_quota = "${var.gpus * 32}Gi"
      }
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = tostring(var.gpus)
      }
    }
  }
}

resource "training_local_queue" "team" {
  name          = "team"
  namespace     = "ml"
  cluster_queue = training_cluster_queue.team.name
}

resource "training_mpi_job" "first" {
  name         = "first"
  namespace    = "ml"
  image        = "horovod/horovod:0.28.1"
  command      = ["mpirun", "python", "/horovod/examples/pytorch/pytorch_synthetic_benchmark.py"]
  worker_count = 2
  gpus         = 1
  queue_name   = training_local_queue.team.name
}

output "first" {
  value = { for i in training_mpi_job.first.instances : i.name => "${i.phase} on ${i.node}" }
}
