# A kubeconfig file and one of its contexts. The settings have the kubernetes provider's names
# and environment variables: with none set, KUBE_CONFIG_PATH (or KUBE_HOST and KUBE_TOKEN, ...)
# is used, and in a pod, the pod's ServiceAccount.
provider "training" {
  config_path    = "~/.kube/config"
  config_context = "gpu-cluster"
}

# On EKS, with a short-lived token from the AWS CLI rather than a file:
#
# provider "training" {
#   host                   = aws_eks_cluster.gpu.endpoint
#   cluster_ca_certificate = base64decode(aws_eks_cluster.gpu.certificate_authority[0].data)
#   exec {
#     api_version = "client.authentication.k8s.io/v1beta1"
#     command     = "aws"
#     args        = ["eks", "get-token", "--cluster-name", aws_eks_cluster.gpu.name]
#   }
# }
