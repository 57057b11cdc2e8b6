# A master and two workers with two GPUs each; training-operator tells each torchrun where the
# master is, the world size and its rank. A new worker_count replaces the job.
resource "training_pytorch_job" "dist" {
  name         = "pytorch-dist"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py", "--epochs", "90"]
  worker_count = 2
  gpus         = 2
  tolerations  = ["nvidia.com/gpu"]
  shm_size     = "8Gi"
}
