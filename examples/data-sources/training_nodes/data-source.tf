# The walkthrough's first step, `kubectl get nodes`, with taints and GPUs.
data "training_nodes" "all" {}

# Only the nodes tainted gpu_node: where a job tolerating gpu_node may land.
data "training_nodes" "gpu" {
  taint_key = "gpu_node"
}

output "free_gpus_on_gpu_nodes" {
  value = { for n in data.training_nodes.gpu.nodes : n.name => n.gpu_allocatable if n.ready }
}
