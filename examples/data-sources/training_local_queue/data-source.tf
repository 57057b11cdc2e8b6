# What waits in the team's queue, and why: readable with the job resources' role alone.
data "training_local_queue" "team" {
  namespace = "research"
  name      = "gpus"
}

output "next_in_line" {
  value = data.training_local_queue.team.head == null ? "nothing waits" : "${data.training_local_queue.team.head.job}: ${data.training_local_queue.team.head.reason}"
}

output "queue" {
  value = [for w in data.training_local_queue.team.workloads : "${w.job} ${w.admitted ? "admitted" : "waiting"}"]
}
