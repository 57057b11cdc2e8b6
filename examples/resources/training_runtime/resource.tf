# The platform team's blueprint: a torch runtime for the whole cluster. Every node of a job on
# it runs torchrun, told by Trainer where the first node is (PET_MASTER_ADDR), how many nodes
# there are and its rank; the nodes tolerate the GPU nodes' taint and land on them.
resource "training_runtime" "torch" {
  name        = "torch-gpu"
  framework   = "torch"
  image       = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command     = ["torchrun", "/workspace/train.py"]
  gpus        = 1
  tolerations = ["nvidia.com/gpu"]
  shm_size    = "8Gi"
}

# An MPI runtime for one team's namespace: nodes that run an SSH server, and a launcher that
# starts once they are ready and runs the job's mpirun over the hostfile Trainer makes. The
# defaults run both as mpiuser (uid 1000) with that user's SSH server, as images built on
# mpi-operator's base image have them.
resource "training_runtime" "mpi" {
  name      = "mpi-pi"
  namespace = "vision"
  framework = "mpi"
  image     = "mpioperator/mpi-pi:openmpi"
  command   = ["mpirun", "/home/mpiuser/pi"]

  mpi = {
    processes_per_node = 2
  }
}
