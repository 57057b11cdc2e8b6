variable "namespace" {
  description = "The namespace the training jobs run in; made here."
  type        = string
  default     = "ml"
}

variable "terraform_subject" {
  description = <<-EOT
    Who applies the jobs' configuration, as an RBAC subject: on GKE the Google account or
    service account's email as a User; on EKS the Kubernetes username or group its access entry
    maps the IAM principal to.
  EOT
  type = object({
    kind = string # User or Group
    name = string
  })
  validation {
    condition     = contains(["User", "Group"], var.terraform_subject.kind)
    error_message = "terraform_subject.kind is User or Group."
  }
}

variable "elastic_jobs" {
  description = "Whether the jobs' identity makes elastic jobs: binds the role that writes their Services and NetworkPolicy."
  type        = bool
  default     = false
}
