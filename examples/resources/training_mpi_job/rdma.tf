# RDMA over InfiniBand: each worker asks for its GPUs and one RDMA device (the name its device
# plugin advertises), may lock memory to register it (IPC_LOCK), and shares the host's IPC
# namespace, which NCCL uses between the ranks of a node. The workers are spread over the racks
# (a node label the cluster sets), and get two minutes to write a checkpoint when stopped; their
# CPU is a request alone, so that data loaders are not throttled.
resource "training_mpi_job" "rdma" {
  name               = "resnet-rdma"
  image              = "registry.example.com/ml/horovod:0.28.1"
  command            = ["mpirun", "python", "/train.py"]
  worker_count       = 4
  gpus               = 8
  cpu                = "32"
  cpu_limit          = false
  extended_resources = { "rdma/hca" = "1" }
  tolerations        = ["nvidia.com/gpu"]
  env                = { NCCL_IB_HCA = "mlx5", NCCL_DEBUG = "INFO" }
  host_ipc           = true

  termination_grace_period_seconds = 120
  topology_spread                  = [{ topology_key = "example.com/rack" }]

  security_context = {
    add_capabilities = ["IPC_LOCK"]
  }
}
