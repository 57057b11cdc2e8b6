# The seed's GPU nodes: labelled nvidia.com/gpu.present and tainted gpu_node. Kueue gives the
# pods it admits under this flavor that node selector and the toleration, so jobs need neither.
resource "training_resource_flavor" "gpu" {
  name        = "gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["gpu_node"]
}
