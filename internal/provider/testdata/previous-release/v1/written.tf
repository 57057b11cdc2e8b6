# The configuration that state.json beside it (its terraform.tfstate) was applied with, by the
# provider at schema version 1 (commit c77963c), before fail_fast and min_running_seconds and the
# one vocabulary; NAMESPACE is the test's namespace.
resource "training_mpi_job" "mpi" {
  name             = "prevmpi"
  namespace        = "NAMESPACE"
  image            = "registry.example/horovod:0.28.1"
  command          = ["python", "/train.py"]
  worker_count     = 2
  slots_per_worker = 2
  launcher_cpu     = "1"
  launcher_memory  = "1Gi"
  tolerations      = ["gpu_node"]
  wait_for         = "created"
  elastic {
    min_workers = 1
    max_workers = 3
  }
  toleration {
    key      = "dedicated"
    operator = "Equal"
    value    = "training"
    effect   = "NoSchedule"
  }
  scheduling_policy = { min_available = 3, queue = "research", priority_class = "high", schedule_timeout_seconds = 600 }
}

resource "training_tf_job" "tf" {
  name         = "prevtf"
  namespace    = "NAMESPACE"
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 2
  ps_count     = 1
  ps_cpu       = "2"
  ps_memory    = "2Gi"
  wait_for     = "created"
  tensorboard {
    log_dir = "/logs"
  }
}

resource "training_pytorch_job" "pytorch" {
  name                 = "prevpytorch"
  namespace            = "NAMESPACE"
  image                = "pytorch/pytorch:2.5.1"
  command              = ["torchrun", "/train.py"]
  worker_count         = 2
  processes_per_worker = 2
  wait_for             = "created"
  elastic {
    min_workers  = 1
    max_workers  = 4
    max_restarts = 3
  }
}

resource "training_elastic_job" "elastic" {
  name         = "prevelastic"
  namespace    = "NAMESPACE"
  image        = "pytorch/pytorch:2.5.1"
  command      = ["sh", "-c", "exec torchrun /train.py"]
  worker_count = 2
  min_workers  = 1
  max_workers  = 3
  etcd_image   = "quay.io/coreos/etcd:v3.4.9"
  etcd_cpu     = "200m"
  etcd_memory  = "256Mi"
  wait_for     = "created"
}

resource "training_runtime" "mpi" {
  name      = "prevmpi"
  namespace = "NAMESPACE"
  framework = "mpi"
  image     = "mpioperator/mpi-pi:openmpi"
  command   = ["mpirun", "/home/mpiuser/pi"]
  mpi {
    processes_per_node = 2
  }
  gang_scheduling {
    schedule_timeout_seconds = 120
  }
}

resource "training_train_job" "train" {
  name         = "prevtrain"
  namespace    = "NAMESPACE"
  runtime      = training_runtime.mpi.name
  runtime_kind = "TrainingRuntime"
  num_nodes    = 2
  tolerations  = ["gpu_node"]
  wait_for     = "created"
}
