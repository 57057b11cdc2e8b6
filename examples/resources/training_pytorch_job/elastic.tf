# Elastic: workers only, meeting at a c10d rendezvous on the first worker; worker_count changes
# in place between the bounds, and torchrun restarts the training from its last checkpoint.
resource "training_pytorch_job" "elastic" {
  name         = "pytorch-elastic"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py", "--checkpoint-dir", "/checkpoints"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]
  data_volumes = ["checkpoints:/checkpoints"]
  elastic      = { min_workers = 1, max_workers = 4 }
}

# Each pod like `arena get` lists instances: role, index, phase and node.
output "pytorch_instances" {
  value = [for i in training_pytorch_job.elastic.instances : "${i.role}-${i.index} ${i.phase} on ${i.node}"]
}
