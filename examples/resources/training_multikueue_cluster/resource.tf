# A worker cluster of the manager cluster's Kueue. Its kubeconfig is in the Secret
# "gpu-east-kubeconfig" of Kueue's namespace (key "kubeconfig"), made outside Terraform's state,
# for example with kubectl create secret generic gpu-east-kubeconfig -n kueue-system
# --from-file=kubeconfig=east.kubeconfig. The provider names the Secret and never reads it.
resource "training_multikueue_cluster" "east" {
  name              = "gpu-east"
  kubeconfig_secret = "gpu-east-kubeconfig"
}

# Whether Kueue is connected to it, and why not.
output "east_connected" {
  value = "${training_multikueue_cluster.east.active} (${training_multikueue_cluster.east.reason})"
}
