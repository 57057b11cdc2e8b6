# Two priorities for Kueue alone: a release's training goes ahead of the experiments in the
# queue and, where the ClusterQueue preempts by priority, evicts them to get its GPUs.
resource "training_workload_priority_class" "release" {
  name        = "release"
  value       = 10000
  description = "Trainings a model release waits for."
}

resource "training_workload_priority_class" "experiment" {
  name        = "experiment"
  value       = 100
  description = "Everything else: may wait, and may be preempted."
}

resource "training_pytorch_job" "bert" {
  name         = "bert"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 4
  gpus         = 1
  queue_name   = "team"

  workload_priority_class = training_workload_priority_class.release.name
}
