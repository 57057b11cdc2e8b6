# The flavor the queue's quota is of: see training_resource_flavor.
resource "training_resource_flavor" "gpu" {
  name        = "gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["nvidia.com/gpu"]
}
