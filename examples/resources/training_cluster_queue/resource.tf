# A team's GPU quota: 4 GPUs of the gpu flavor, with CPU and memory to go with them. In the
# cohort "research" it may borrow 4 more GPUs that other teams leave unused, and takes its own
# back from lower-priority borrowers when it needs them.
resource "training_cluster_queue" "vision" {
  name   = "vision"
  cohort = "research"

  resource_group {
    covered_resources = ["cpu", "memory", "nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "cpu"
        nominal_quota = "64"
      }
      resource {
        name          = "memory"
        nominal_quota = "256Gi"
      }
      resource {
        name            = "nvidia.com/gpu"
        nominal_quota   = "4"
        borrowing_limit = "4"
      }
    }
  }

  preemption {
    reclaim_within_cohort = "LowerPriority"
    within_cluster_queue  = "LowerPriority"
  }
}

output "vision_gpus_in_use" {
  value = lookup(training_cluster_queue.vision.usage, "gpu/nvidia.com/gpu", "0")
}
