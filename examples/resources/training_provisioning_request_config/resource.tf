# GKE's Dynamic Workload Scheduler as Kueue's capacity on demand: a job of the queue gets its
# quota, then waits until GKE has provisioned a node pool's nodes for all of its pods, and runs on
# them. A request GKE cannot serve within an hour is made again twice, then the job goes back to
# its queue.
resource "training_provisioning_request_config" "dws" {
  name               = "dws"
  provisioning_class = "queued-provisioning.gke.io"
  parameters         = { ValidUntilSeconds = "3600" }
  managed_resources  = ["nvidia.com/gpu"]
  retry_limit        = 2

  node_selector_from_class_details = { "cloud.google.com/gke-nodepool" = "NodePoolName" }
}

resource "training_admission_check" "dws" {
  name                        = "dws"
  provisioning_request_config = training_provisioning_request_config.dws.name
}

resource "training_cluster_queue" "on_demand" {
  name             = "on-demand"
  admission_checks = [training_admission_check.dws.name]

  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = "dws-a100"
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "64"
      }
    }
  }
}
