# The platform team's runtime (see training_runtime), made in the same configuration, and a
# practitioner's job on it that says only what differs: its command, its size and a variable.
resource "training_runtime" "torch" {
  name        = "torch-gpu"
  framework   = "torch"
  image       = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command     = ["torchrun", "/workspace/train.py"]
  gpus        = 1
  tolerations = ["nvidia.com/gpu"]
}

resource "training_train_job" "finetune" {
  name      = "finetune"
  runtime   = training_runtime.torch.name
  command   = ["torchrun", "/workspace/finetune.py"]
  num_nodes = 4
  env       = { NCCL_DEBUG = "INFO" }
}

# Each node like `arena get` lists instances: role, index (the node rank), phase and node.
output "finetune_nodes" {
  value = [for i in training_train_job.finetune.instances : "${i.role}-${i.index} ${i.phase} on ${i.node}"]
}
