# Connection settings have the kubernetes provider's names and environment variables:
# with none set, KUBE_CONFIG_PATH (or KUBE_HOST and KUBE_TOKEN, ...) is used.
provider "training" {
  config_path    = "~/.kube/config"
  config_context = "gpu-cluster"
}
