# What a TrainJob of 4 nodes gets on a runtime another team owns, before writing one on it.
data "training_runtime" "torch" {
  name      = "torch-distributed"
  num_nodes = 4
}

output "trainer_image" {
  value = data.training_runtime.torch.trainer_image
}

# What the queue must have free for the job, by resource.
output "requests" {
  value = data.training_runtime.torch.requests
}

output "pods" {
  value = { for j in data.training_runtime.torch.replicated_jobs : j.name => j.pods }
}
