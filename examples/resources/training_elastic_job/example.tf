# FrameworkController's own PyTorch elastic ImageNet example, whose 2020 image has the torchelastic
# launcher rather than torchrun.
resource "training_elastic_job" "pet" {
  name         = "pet"
  image        = "torchelastic/examples:0.2.0"
  launcher     = "torchelastic"
  script       = "/workspace/examples/imagenet/main.py"
  script_args  = ["--arch=resnet18", "--batch-size=32", "--epochs=2", "/workspace/data/tiny-imagenet-200"]
  worker_count = 2
  elastic      = { min_workers = 1, max_workers = 4 }
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]
}

# Each task like `arena get` lists instances: role, index, phase and node.
output "pet_instances" {
  value = [for i in training_elastic_job.pet.instances : "${i.role}-${i.index} ${i.phase} on ${i.node}"]
}
