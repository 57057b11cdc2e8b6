# A job of 2 nodes with 1 GPU each on Trainer's own torch-distributed runtime: Trainer tells every
# node's torchrun the node count, its rank and where the first node is.
resource "training_train_job" "resnet" {
  name        = "resnet"
  runtime     = "torch-distributed"
  image       = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command     = ["torchrun", "/workspace/train.py", "--epochs", "90"]
  num_nodes   = 2
  gpus        = 1
  tolerations = ["nvidia.com/gpu"]
}
