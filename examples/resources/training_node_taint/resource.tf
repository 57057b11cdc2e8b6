# kubectl taint nodes cn-beijing.192.168.3.228 gpu_node=invalid:NoSchedule
resource "training_node_taint" "gpu" {
  for_each = toset(["cn-beijing.192.168.3.228", "cn-beijing.192.168.3.229"])

  node   = each.value
  key    = "gpu_node"
  value  = "invalid"
  effect = "NoSchedule"
}

resource "training_node_taint" "ssd" {
  node   = "cn-beijing.192.168.3.230"
  key    = "ssd_node"
  value  = "invalid"
  effect = "NoSchedule"
}
