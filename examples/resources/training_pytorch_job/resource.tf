# arena submit pytorch --name=pytorch-dist --workers=3 --gpus=2 --toleration gpu_node ...
# A master and two workers; training-operator tells each torchrun where the master is, the world
# size and its rank. A new worker_count replaces the job.
resource "training_pytorch_job" "dist" {
  name         = "pytorch-dist"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py", "--epochs", "90"]
  worker_count = 2
  gpus         = 2
  tolerations  = ["gpu_node"]
  shm_size     = "8Gi"
}

# Elastic: workers only, meeting at a c10d rendezvous on the first worker; worker_count changes
# in place between min_workers and max_workers.
resource "training_pytorch_job" "elastic" {
  name         = "pytorch-elastic"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["gpu_node"]

  elastic = {
    min_workers  = 1
    max_workers  = 4
    max_restarts = 3
  }
}

# Each pod like `arena get` lists instances: role, index, state and node.
output "pytorch_instances" {
  value = [for i in training_pytorch_job.dist.instances : "${i.role}-${i.index} ${i.phase} on ${i.node}"]
}
