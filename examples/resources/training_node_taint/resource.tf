# kubectl taint nodes NODE nvidia.com/gpu=present:NoSchedule: the GPU nodes take only the pods that
# tolerate the taint (tolerations = ["nvidia.com/gpu"]), so CPU work stays off them.
variable "gpu_nodes" {
  type    = set(string)
  default = ["gpu-node-1", "gpu-node-2"]
}

resource "training_node_taint" "gpu" {
  for_each = var.gpu_nodes

  node   = each.value
  key    = "nvidia.com/gpu"
  value  = "present"
  effect = "NoSchedule"
}
