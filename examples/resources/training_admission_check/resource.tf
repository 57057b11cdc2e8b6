resource "training_multikueue_cluster" "east" {
  name              = "gpu-east"
  kubeconfig_secret = "gpu-east-kubeconfig"
}

resource "training_multikueue_config" "fleet" {
  name     = "gpu-fleet"
  clusters = [training_multikueue_cluster.east.name]
}

# The MultiKueue admission check: the ClusterQueue that lists it dispatches each job it gives
# quota to a worker cluster of the config.
resource "training_admission_check" "fleet" {
  name              = "gpu-fleet"
  multikueue_config = training_multikueue_config.fleet.name
}

resource "training_resource_flavor" "gpu" {
  name        = "fleet-gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
}

resource "training_cluster_queue" "fleet" {
  name             = "fleet"
  admission_checks = [training_admission_check.fleet.name]
  resource_group {
    covered_resources = ["cpu", "nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.gpu.name
      resource {
        name          = "cpu"
        nominal_quota = "256"
      }
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "64"
      }
    }
  }
}
