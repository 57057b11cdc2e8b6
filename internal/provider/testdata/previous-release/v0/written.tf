# The configuration that state.json beside it (its terraform.tfstate) was applied with, by the provider at
# commit 65d11ee (before security_context, pod_patch and ssh_auth_mount_path); NAMESPACE is the
# test's namespace.
resource "training_mpi_job" "mpi" {
  name         = "oldmpi"
  namespace    = "NAMESPACE"
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "python", "/train.py"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["gpu_node"]
  env          = { EPOCHS = "3" }
  labels       = { team = "vision" }
}

resource "training_tf_job" "tf" {
  name         = "oldtf"
  namespace    = "NAMESPACE"
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 2
  tolerations  = ["gpu_node"]
}

resource "training_pytorch_job" "pytorch" {
  name         = "oldpytorch"
  namespace    = "NAMESPACE"
  image        = "pytorch/pytorch:2.5.1"
  command      = ["torchrun", "/train.py"]
  worker_count = 2
  tolerations  = ["gpu_node"]
  shm_size     = "1Gi"
}

resource "training_elastic_job" "elastic" {
  name         = "oldelastic"
  namespace    = "NAMESPACE"
  image        = "torchelastic/examples:0.2.0"
  script       = "/workspace/train.py"
  worker_count = 2
  min_workers  = 1
  max_workers  = 3
  tolerations  = ["gpu_node"]
}

resource "training_runtime" "torch" {
  name      = "oldtorch"
  namespace = "NAMESPACE"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1"
  command   = ["torchrun", "/train.py"]
}

resource "training_train_job" "train" {
  name         = "oldtrain"
  namespace    = "NAMESPACE"
  runtime      = training_runtime.torch.name
  runtime_kind = "TrainingRuntime"
  num_nodes    = 2
  tolerations  = ["gpu_node"]
}
