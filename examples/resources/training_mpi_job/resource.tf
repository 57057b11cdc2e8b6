# arena submit mpi --name=mpi-dist --gpus=1 --workers=1 --toleration ssd_node ...
# Runs only on nodes tainted ssd_node (and on untainted nodes).
resource "training_mpi_job" "ssd" {
  name         = "mpi-dist"
  image        = "registry.cn-hangzhou.aliyuncs.com/tensorflow-samples/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5"
  command      = ["mpirun", "python", "/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py", "--model", "resnet101", "--batch_size", "64", "--variable_update", "horovod"]
  worker_count = 1
  gpus         = 1
  tolerations  = ["ssd_node"]
  data_volumes = ["training-logs:/training_logs"]

  # --tensorboard --logdir /training_logs, on a node port as Arena serves it
  tensorboard = {
    log_dir      = "/training_logs"
    service_type = "NodePort"
  }
}

# --toleration gpu_node --toleration ssd_node: either kind of tainted node will do.
resource "training_mpi_job" "gpu_or_ssd" {
  name         = "mpi-dist-2"
  image        = "registry.cn-hangzhou.aliyuncs.com/tensorflow-samples/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5"
  command      = ["mpirun", "python", "/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py", "--model", "resnet101"]
  worker_count = 2
  gpus         = 4
  cpu          = "16"
  memory       = "64Gi"
  shm_size     = "8Gi"
  tolerations  = ["gpu_node", "ssd_node"]

  timeouts {
    create = "30m"
  }
}

# --toleration all: every taint is tolerated. A full key=value:Effect form is accepted too.
resource "training_mpi_job" "anywhere" {
  name         = "mpi-dist-3"
  image        = "registry.cn-hangzhou.aliyuncs.com/tensorflow-samples/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5"
  command      = ["mpirun", "python", "/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py"]
  worker_count = 4
  tolerations  = ["all"]
  wait_for     = "created"
}

# Elastic Horovod: worker_count changes in place, between min_workers and max_workers, while
# horovodrun finds the workers through mpi-operator's discovery script. A plain mpirun job (the
# ones above) is replaced instead: its ranks are fixed when it starts.
resource "training_mpi_job" "elastic" {
  name         = "horovod-elastic"
  image        = "horovod/horovod:0.28.1"
  command      = ["python", "/horovod/examples/elastic/pytorch/pytorch_mnist_elastic.py"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["gpu_node"]

  elastic = {
    min_workers = 1
    max_workers = 4
  }
}

# Where each instance runs, like the NODE column of `arena get`, and the TensorBoard.
output "ssd_instances" {
  value = { for i in training_mpi_job.ssd.instances : i.name => i.node }
}

output "tensorboard" {
  value = training_mpi_job.ssd.tensorboard_url
}
