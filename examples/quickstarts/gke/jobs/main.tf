# GKE: a team's GPU quota and its first job, applied by the identity ../platform bound the
# provider's roles to. GKE labels a GPU node pool's nodes cloud.google.com/gke-accelerator with
# their GPU and, when the cluster also has a pool without GPUs, taints them
# nvidia.com/gpu=present:NoSchedule (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus).

variable "endpoint" {
  description = "The cluster's endpoint, as for ../platform."
  type        = string
}

variable "ca_certificate" {
  description = "The cluster's CA, base64, as for ../platform."
  type        = string
}

variable "accelerator" {
  description = "The GPU of the node pool, as GKE labels its nodes cloud.google.com/gke-accelerator (nvidia-l4, nvidia-tesla-a100, ...)."
  type        = string
  default     = "nvidia-l4"
}

variable "gpus" {
  description = "The team's GPU quota."
  type        = number
  default     = 4
}

provider "training" {
  host                   = "https://${var.endpoint}"
  cluster_ca_certificate = base64decode(var.ca_certificate)
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "gke-gcloud-auth-plugin"
  }
}

# Kueue puts the pods it admits under this flavor on the pool's nodes, tolerating its taint.
resource "training_resource_flavor" "gpu" {
  name        = var.accelerator
  node_labels = { "cloud.google.com/gke-accelerator" = var.accelerator }
  tolerations = ["nvidia.com/gpu=present:NoSchedule"]
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
