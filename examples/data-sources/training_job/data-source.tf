# arena get mpi-dist: works for jobs created outside this configuration too.
data "training_job" "mpi_dist" {
  kind = "mpi"
  name = "mpi-dist"
}

output "mpi_dist" {
  value = {
    status   = data.training_job.mpi_dist.status
    priority = data.training_job.mpi_dist.priority
    duration = data.training_job.mpi_dist.duration
    nodes    = [for i in data.training_job.mpi_dist.instances : "${i.name} ${i.phase} ${i.age} ${i.node}"]
  }
}
