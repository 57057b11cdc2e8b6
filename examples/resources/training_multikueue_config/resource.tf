# The worker clusters a MultiKueue admission check dispatches to.
resource "training_multikueue_cluster" "east" {
  name              = "gpu-east"
  kubeconfig_secret = "gpu-east-kubeconfig"
}

resource "training_multikueue_cluster" "west" {
  name              = "gpu-west"
  kubeconfig_secret = "gpu-west-kubeconfig"
}

resource "training_multikueue_config" "fleet" {
  name     = "gpu-fleet"
  clusters = [training_multikueue_cluster.east.name, training_multikueue_cluster.west.name]
}
