# The gpu_node taints of the Arena walkthrough's GPU nodes. Imported taints are left on their
# nodes by terraform destroy (this provider did not add them).
list "training_node_taint" "gpu" {
  provider         = training
  include_resource = true
  config {
    label_selector = "nvidia.com/gpu.present=true"
    key            = "gpu_node"
  }
}
