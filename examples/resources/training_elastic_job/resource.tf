# FrameworkController's PyTorch elastic ImageNet example as one resource: the etcd Service, the
# headless worker Service and the Framework with its etcd and worker task roles.
resource "training_elastic_job" "pet" {
  name        = "pet"
  image       = "torchelastic/examples:0.2.0"
  launcher    = "torchelastic" # the example's 2020 image has torchelastic, not torchrun
  script      = "/workspace/examples/imagenet/main.py"
  script_args = ["--arch=resnet18", "--batch-size=32", "--epochs=2", "/workspace/data/tiny-imagenet-200"]

  # torchelastic's --nnodes=1:4; change worker_count to 2, then 3, to rescale in place.
  worker_count = 4
  elastic      = { min_workers = 1, max_workers = 4 }
  gpus         = 1
  tolerations  = ["gpu_node"]
}

# Each task like `arena get` lists instances: role, index, state and node.
output "pet_instances" {
  value = [for i in training_elastic_job.pet.instances : "${i.role}-${i.index} ${i.phase} on ${i.node}"]
}
