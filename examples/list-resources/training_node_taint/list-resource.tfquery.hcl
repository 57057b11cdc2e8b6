# The nvidia.com/gpu taints of the GPU nodes, set by hand or by a node pool. Imported taints are
# left on their nodes by terraform destroy (this provider did not add them).
list "training_node_taint" "gpu" {
  provider         = training
  include_resource = true
  config {
    label_selector = "nvidia.com/gpu.present=true"
    key            = "nvidia.com/gpu"
  }
}
