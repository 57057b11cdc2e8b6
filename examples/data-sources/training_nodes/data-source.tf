# Every node, with its labels, taints and GPUs: `kubectl get nodes` for training.
data "training_nodes" "all" {}

# Only the nodes tainted nvidia.com/gpu: where a job tolerating it may land.
data "training_nodes" "gpu" {
  taint_key = "nvidia.com/gpu"
}

output "free_gpus_on_gpu_nodes" {
  value = { for n in data.training_nodes.gpu.nodes : n.name => n.gpu_allocatable if n.ready }
}
