# The jobs of v1, v2 and v3/state.json, in this release's vocabulary; NAMESPACE is the test's namespace.
resource "training_mpi_job" "mpi" {
  name                 = "prevmpi"
  namespace            = "NAMESPACE"
  image                = "registry.example/horovod:0.28.1"
  command              = ["python", "/train.py"]
  worker_count         = 2
  processes_per_worker = 2
  tolerations          = ["gpu_node", "dedicated=training:NoSchedule"]
  wait_for             = "created"
  elastic              = { min_workers = 1, max_workers = 3 }
  roles                = { launcher = { cpu = "1", memory = "1Gi" } }
  gang_scheduling      = { min_available = 3, volcano_queue = "research", priority_class_name = "high", schedule_timeout_seconds = 600 }
}

resource "training_tf_job" "tf" {
  name         = "prevtf"
  namespace    = "NAMESPACE"
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 2
  ps_count     = 1
  roles        = { ps = { cpu = "2", memory = "2Gi" } }
  wait_for     = "created"
  tensorboard  = { log_dir = "/logs" }
}

resource "training_pytorch_job" "pytorch" {
  name                 = "prevpytorch"
  namespace            = "NAMESPACE"
  image                = "pytorch/pytorch:2.5.1"
  command              = ["torchrun", "/train.py"]
  worker_count         = 2
  processes_per_worker = 2
  wait_for             = "created"
  elastic              = { min_workers = 1, max_workers = 4, max_restarts = 3 }
}

resource "training_elastic_job" "elastic" {
  name           = "prevelastic"
  namespace      = "NAMESPACE"
  image          = "pytorch/pytorch:2.5.1"
  worker_command = ["sh", "-c", "exec torchrun /train.py"]
  worker_count   = 2
  elastic        = { min_workers = 1, max_workers = 3 }
  roles          = { etcd = { image = "quay.io/coreos/etcd:v3.4.9", cpu = "200m", memory = "256Mi" } }
  wait_for       = "created"
}

resource "training_runtime" "mpi" {
  name            = "prevmpi"
  namespace       = "NAMESPACE"
  framework       = "mpi"
  image           = "mpioperator/mpi-pi:openmpi"
  command         = ["mpirun", "/home/mpiuser/pi"]
  mpi             = { processes_per_node = 2 }
  gang_scheduling = { schedule_timeout_seconds = 120 }
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
