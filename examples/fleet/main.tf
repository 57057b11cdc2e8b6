# The manager cluster, where jobs are submitted, and the worker clusters its Kueue dispatches them
# to: a job's instances are read from the worker it runs in.
provider "training" {
  config_path = "~/.kube/manager"
  worker_cluster {
    name        = "gpu-east" # a training_multikueue_cluster's name
    config_path = "~/.kube/gpu-east"
  }
}

# The same worker, to declare its queues.
provider "training" {
  alias       = "east"
  config_path = "~/.kube/gpu-east"
}

resource "training_resource_flavor" "east" {
  provider = training.east
  name     = "gpu"
}

resource "training_cluster_queue" "east" {
  provider = training.east
  name     = "research"
  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.east.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "64"
      }
    }
  }
}

resource "training_local_queue" "east" {
  provider      = training.east
  name          = "research"
  cluster_queue = training_cluster_queue.east.name
}
