# EKS: the operators, Kueue and the provider's RBAC, applied once by a cluster administrator.
# Terraform logs in as the AWS CLI does (aws eks get-token,
# https://docs.aws.amazon.com/cli/latest/reference/eks/get-token.html).

variable "cluster_name" {
  description = "The EKS cluster's name."
  type        = string
}

variable "region" {
  description = "The cluster's AWS region."
  type        = string
}

variable "endpoint" {
  description = "The cluster's endpoint: aws eks describe-cluster --name CLUSTER --query cluster.endpoint --output text."
  type        = string
}

variable "ca_certificate" {
  description = "The cluster's CA, base64: aws eks describe-cluster --name CLUSTER --query cluster.certificateAuthority.data --output text."
  type        = string
}

variable "terraform_subject" {
  description = "Who applies ../jobs: the Kubernetes username or group that its IAM principal's access entry maps it to."
  type        = object({ kind = string, name = string })
}

provider "kubernetes" {
  host                   = var.endpoint
  cluster_ca_certificate = base64decode(var.ca_certificate)
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", var.cluster_name, "--region", var.region]
  }
}

provider "helm" {
  kubernetes = {
    host                   = var.endpoint
    cluster_ca_certificate = base64decode(var.ca_certificate)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", var.cluster_name, "--region", var.region]
    }
  }
}

module "platform" {
  source            = "../../common/platform"
  terraform_subject = var.terraform_subject
}
