# Two workers with one GPU each, on the GPU nodes (tainted nvidia.com/gpu, as GKE taints a GPU
# node pool and EKS node groups are often given). The launcher's mpirun starts the ranks over SSH; a new
# worker_count replaces the job, since mpirun fixes its ranks when it starts.
resource "training_mpi_job" "resnet" {
  name         = "resnet-horovod"
  image        = "horovod/horovod:0.28.1"
  command      = ["mpirun", "python", "/horovod/examples/pytorch/pytorch_synthetic_benchmark.py"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]
}
