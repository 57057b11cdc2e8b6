# Hold the sweep back while the GPUs go to an urgent run: its pods stop (its checkpoint saved),
# the job stays, and a queued job gives its quota back.
#   terraform apply -invoke=action.training_suspend_job.sweep
action "training_suspend_job" "sweep" {
  config {
    kind      = "mpi"
    namespace = "research"
    name      = "hparam-sweep-17"
  }
}
