# The provider's ClusterRoles (the RBAC example of the provider's docs), bound to the identity that
# applies the jobs: the jobs' role in their namespace, the cluster-wide reads, the admission
# prediction and Kueue's configuration, and the queues' roles for the flavor, ClusterQueue and
# LocalQueue the jobs' configuration declares.

resource "kubernetes_manifest" "provider_roles" {
  for_each = {
    for m in provider::kubernetes::manifest_decode_multi(file("${path.module}/../../../rbac/provider-rbac.yaml")) :
    m.metadata.name => m
  }
  manifest = each.value
}

resource "kubernetes_namespace_v1" "jobs" {
  metadata {
    name = var.namespace
  }
}

locals {
  namespaced_roles = concat(
    ["terraform-provider-training", "terraform-provider-training-local-queues", "terraform-provider-training-write-only-env"],
    var.elastic_jobs ? ["terraform-provider-training-elastic-jobs"] : [],
  )
  cluster_roles = [
    "terraform-provider-training-cluster-reads",
    "terraform-provider-training-admission-prediction",
    "terraform-provider-training-kueue",
  ]
}

resource "kubernetes_role_binding_v1" "jobs" {
  for_each = toset(local.namespaced_roles)
  metadata {
    name      = each.key
    namespace = kubernetes_namespace_v1.jobs.metadata[0].name
  }
  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = kubernetes_manifest.provider_roles[each.key].manifest.metadata.name
  }
  subject {
    kind      = var.terraform_subject.kind
    name      = var.terraform_subject.name
    api_group = "rbac.authorization.k8s.io"
  }
}

resource "kubernetes_cluster_role_binding_v1" "jobs" {
  for_each = toset(local.cluster_roles)
  metadata {
    name = "${each.key}-jobs"
  }
  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = kubernetes_manifest.provider_roles[each.key].manifest.metadata.name
  }
  subject {
    kind      = var.terraform_subject.kind
    name      = var.terraform_subject.name
    api_group = "rbac.authorization.k8s.io"
  }
}

resource "kubernetes_role_binding_v1" "kueue_config" {
  metadata {
    name      = "terraform-provider-training-kueue-config"
    namespace = helm_release.kueue.namespace
  }
  role_ref {
    api_group = "rbac.authorization.k8s.io"
    kind      = "ClusterRole"
    name      = kubernetes_manifest.provider_roles["terraform-provider-training-kueue-config"].manifest.metadata.name
  }
  subject {
    kind      = var.terraform_subject.kind
    name      = var.terraform_subject.name
    api_group = "rbac.authorization.k8s.io"
  }
}

output "namespace" {
  value = kubernetes_namespace_v1.jobs.metadata[0].name
}
