# Restart the fine-tuning job from its checkpoint once a node's driver is fixed, from the
# pipeline rather than kubectl:
#   terraform apply -invoke=action.training_restart_job.finetune
action "training_restart_job" "finetune" {
  config {
    kind      = "pytorch"
    namespace = "research"
    name      = "llama-finetune"
    timeout   = "45m" # the pods' checkpoint save, then their start
  }
}
