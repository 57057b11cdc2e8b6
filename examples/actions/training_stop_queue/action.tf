# A maintenance window on the GPU nodes: admit nothing new, let what runs finish.
#   terraform apply -invoke=action.training_stop_queue.research
action "training_stop_queue" "research" {
  config {
    cluster_queue = "research"
  }
}

# The nodes are drained now: also evict what runs (each job's pods stop with their grace, and the
# jobs wait in the queue).
action "training_stop_queue" "research_now" {
  config {
    cluster_queue = "research"
    drain         = true
  }
}
