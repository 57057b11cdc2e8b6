# Every plan warns of what the queues below have wrong taken together: here, flavor h100 that
# no ClusterQueue covers, and team-vision's borrowing limit of 12 GPUs beyond the 10 that
# team-nlp lends to their cohort. The admission checks and their configs, given too, are checked
# against the queues that name them.
locals {
  flavors        = [training_resource_flavor.a100, training_resource_flavor.h100]
  cluster_queues = [training_cluster_queue.vision, training_cluster_queue.nlp]
  checks         = [training_admission_check.capacity]
  configs        = [training_provisioning_request_config.capacity]
  problems       = provider::training::queue_problems(local.flavors, local.cluster_queues, local.checks, local.configs)
}

check "queues" {
  assert {
    condition     = length(local.problems) == 0
    error_message = join("\n", local.problems)
  }
}

resource "training_provisioning_request_config" "capacity" {
  name               = "capacity"
  provisioning_class = "queued-provisioning.gke.io"
  managed_resources  = ["nvidia.com/gpu"]
}

resource "training_admission_check" "capacity" {
  name                        = "capacity"
  provisioning_request_config = training_provisioning_request_config.capacity.name
}

resource "training_resource_flavor" "a100" {
  name        = "a100"
  node_labels = { "nvidia.com/gpu.product" = "A100" }
}

resource "training_resource_flavor" "h100" {
  name        = "h100"
  node_labels = { "nvidia.com/gpu.product" = "H100" }
}

resource "training_cluster_queue" "vision" {
  name   = "team-vision"
  cohort = "org"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.a100.name
      resource {
        name            = "nvidia.com/gpu"
        nominal_quota   = "8"
        borrowing_limit = "12"
      }
    }
  }
}

resource "training_cluster_queue" "nlp" {
  name             = "team-nlp"
  cohort           = "org"
  admission_checks = [training_admission_check.capacity.name]
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.a100.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "16"
        lending_limit = "10"
      }
    }
  }
}
