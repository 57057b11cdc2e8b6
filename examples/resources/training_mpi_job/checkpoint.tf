# A plain mpirun job that saves its training when it is stopped: a new worker_count replaces it,
# its ranks get SIGTERM with the time to save to the claim, and the job made in its place resumes
# from there.
resource "training_mpi_job" "bert" {
  name         = "bert"
  image        = "registry.example.com/ml/bert-horovod:1.4"
  command      = ["mpirun", "python3", "/workspace/train.py", "--checkpoint-dir", "/checkpoints/bert"]
  worker_count = 8
  gpus         = 8
  tolerations  = ["nvidia.com/gpu"]
  data_volumes = ["checkpoints:/checkpoints"]
  checkpoint   = { path = "/checkpoints/bert", save_seconds = 120 }
}
