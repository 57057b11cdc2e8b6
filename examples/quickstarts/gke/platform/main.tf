# GKE: the operators, Kueue and the provider's RBAC, applied once by a cluster administrator.
# Terraform logs in as gcloud does, through gke-gcloud-auth-plugin
# (https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl).

variable "endpoint" {
  description = "The cluster's endpoint: gcloud container clusters describe CLUSTER --location LOCATION --format='value(endpoint)'."
  type        = string
}

variable "ca_certificate" {
  description = "The cluster's CA, base64: the same command with --format='value(masterAuth.clusterCaCertificate)'."
  type        = string
}

variable "terraform_subject" {
  description = "Who applies ../jobs: its Google account's or service account's email, as a User."
  type        = object({ kind = string, name = string })
}

provider "kubernetes" {
  host                   = "https://${var.endpoint}"
  cluster_ca_certificate = base64decode(var.ca_certificate)
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "gke-gcloud-auth-plugin"
  }
}

provider "helm" {
  kubernetes = {
    host                   = "https://${var.endpoint}"
    cluster_ca_certificate = base64decode(var.ca_certificate)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "gke-gcloud-auth-plugin"
    }
  }
}

module "platform" {
  source            = "../../common/platform"
  terraform_subject = var.terraform_subject
}
