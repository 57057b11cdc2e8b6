# A ClusterQueue the platform team owns, read by a team that plans against it.
data "training_cluster_queue" "research" {
  name = "research"
}

output "gpu_quota" {
  value = {
    for q in data.training_cluster_queue.research.quotas : "${q.flavor}/${q.resource}" => q.nominal_quota
    if q.resource == "nvidia.com/gpu"
  }
}

output "gpus_in_use" {
  value = { for k, v in data.training_cluster_queue.research.usage : k => v if endswith(k, "/nvidia.com/gpu") }
}

output "blocked_by" {
  value = try(data.training_cluster_queue.research.head.reason, null)
}
