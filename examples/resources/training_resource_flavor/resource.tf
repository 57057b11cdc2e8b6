# The GPU nodes, labelled nvidia.com/gpu.present by NVIDIA's feature discovery and tainted
# nvidia.com/gpu. Kueue gives the pods it admits under this flavor that node selector and the
# toleration, so jobs need neither.
resource "training_resource_flavor" "gpu" {
  name        = "gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["nvidia.com/gpu"]
}
