# The platform team's runtime (see training_runtime), made in the same configuration.
resource "training_runtime" "torch" {
  name      = "torch-gpu"
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command   = ["torchrun", "/workspace/train.py"]
}

# A practitioner's job on it: 2 nodes with 1 GPU each, on the GPU nodes. Trainer tells every
# node's torchrun the node count, its rank and where the first node is.
resource "training_train_job" "resnet" {
  name        = "resnet"
  runtime     = training_runtime.torch.name
  command     = ["torchrun", "/workspace/train.py", "--epochs", "90"]
  num_nodes   = 2
  gpus        = 1
  tolerations = ["gpu_node"]
  env         = { NCCL_DEBUG = "INFO" }
}

# On Trainer's own torch runtime; with queue_name = "..." Kueue would hold it until its quota
# admits it.
resource "training_train_job" "finetune" {
  name      = "finetune"
  runtime   = "torch-distributed"
  image     = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command   = ["torchrun", "/workspace/finetune.py"]
  num_nodes = 1
  cpu       = "2"
  memory    = "8Gi"
}

# Each node like `arena get` lists instances: role, index (the node rank), state and node.
output "resnet_nodes" {
  value = [for i in training_train_job.resnet.instances : "${i.role}-${i.index} ${i.phase} on ${i.node}"]
}
