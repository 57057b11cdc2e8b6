# Give the queue's GPUs to what waits, now, and put this job back in line: its pods stop (its
# checkpoint saved), Kueue gives its quota back and admits it again when it fits.
#   terraform apply -invoke=action.training_requeue_job.sweep
action "training_requeue_job" "sweep" {
  config {
    kind      = "mpi"
    namespace = "research"
    name      = "hparam-sweep-17"
  }
}
