#   terraform apply -invoke=action.training_resume_job.sweep
action "training_resume_job" "sweep" {
  config {
    kind      = "mpi"
    namespace = "research"
    name      = "hparam-sweep-17"
  }
}
