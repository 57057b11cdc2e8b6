# The vision team's namespace submits to its ClusterQueue through this LocalQueue. Two jobs of
# 4 GPUs share the team's quota of 4: the first runs, the second is QUEUED (its queue_reason
# says how many GPUs it still needs) and starts when the first is done, without failing the apply.
resource "training_local_queue" "vision" {
  name          = "vision"
  namespace     = "default"
  cluster_queue = "vision"
}

resource "training_mpi_job" "resnet" {
  name         = "resnet"
  image        = "horovod/horovod:0.28.1"
  command      = ["mpirun", "python", "train.py", "--model", "resnet101"]
  worker_count = 2
  gpus         = 2
  queue_name   = training_local_queue.vision.name
  wait_for     = "admitted"
}

resource "training_mpi_job" "vit" {
  name         = "vit"
  image        = "horovod/horovod:0.28.1"
  command      = ["mpirun", "python", "train.py", "--model", "vit-b16"]
  worker_count = 2
  gpus         = 2
  queue_name   = training_local_queue.vision.name
  wait_for     = "created"
  depends_on   = [training_mpi_job.resnet]
}

output "vit" {
  value = "${training_mpi_job.vit.status}: ${coalesce(training_mpi_job.vit.queue_reason, "admitted")}"
}
