# The window is over: admit again, in the queue's order.
#   terraform apply -invoke=action.training_resume_queue.research
action "training_resume_queue" "research" {
  config {
    cluster_queue = "research"
  }
}
