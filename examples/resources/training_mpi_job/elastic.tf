# Elastic Horovod: worker_count changes in place, between the bounds, while horovodrun finds the
# workers through mpi-operator's discovery script. A TensorBoard reads the logs from the job's
# volume.
resource "training_mpi_job" "elastic" {
  name         = "horovod-elastic"
  image        = "horovod/horovod:0.28.1"
  command      = ["python", "/horovod/examples/elastic/pytorch/pytorch_mnist_elastic.py"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]
  data_volumes = ["training-logs:/logs"]
  elastic      = { min_workers = 1, max_workers = 4 }
  tensorboard  = { log_dir = "/logs" }
}

# Where each worker runs, like the NODE column of `arena get`.
output "elastic_instances" {
  value = { for i in training_mpi_job.elastic.instances : i.name => i.node }
}
