# The GPU nodes, labelled nvidia.com/gpu.present=true by the NVIDIA GPU Operator and tainted
# nvidia.com/gpu. Without the operator, select the label the cloud sets: GKE's
# cloud.google.com/gke-accelerator (nvidia-l4, nvidia-h100-80gb, ...), EKS's
# eks.amazonaws.com/nodegroup or, under Auto Mode, eks.amazonaws.com/instance-gpu-name. Kueue
# gives the pods it admits under this flavor that node selector and the toleration, so jobs need
# neither.
resource "training_resource_flavor" "gpu" {
  name        = "gpu"
  node_labels = { "nvidia.com/gpu.present" = "true" }
  tolerations = ["nvidia.com/gpu"]
}
