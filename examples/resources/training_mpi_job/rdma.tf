# RDMA over InfiniBand: each worker asks for its GPUs and one RDMA device (the name its device
# plugin advertises), may lock memory to register it (IPC_LOCK), and shares the host's IPC
# namespace, which NCCL uses between the ranks of a node.
resource "training_mpi_job" "rdma" {
  name               = "resnet-rdma"
  image              = "registry.example/horovod:0.28.1"
  command            = ["mpirun", "python", "/train.py"]
  worker_count       = 4
  gpus               = 8
  extended_resources = { "rdma/hca" = "1" }
  tolerations        = ["gpu_node"]
  env                = { NCCL_IB_HCA = "mlx5", NCCL_DEBUG = "INFO" }

  security_context = {
    add_capabilities = ["IPC_LOCK"]
  }
  pod_patch = {
    worker = yamlencode({ spec = { hostIPC = true } })
  }
}
