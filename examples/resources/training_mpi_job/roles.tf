# Roles that differ: the workers take the job-wide settings (8 GPUs each, on the GPU nodes); the
# launcher, which only starts mpirun, runs a slimmer image on the CPU nodes, with resources of
# its own and a variable of its own.
resource "training_mpi_job" "roles" {
  name         = "resnet-roles"
  image        = "registry.example.com/ml/horovod:0.28.1-cuda12"
  command      = ["mpirun", "python", "/train.py"]
  worker_count = 4
  gpus         = 8
  tolerations  = ["nvidia.com/gpu"]

  roles = {
    launcher = {
      image         = "registry.example.com/ml/horovod:0.28.1-cpu"
      cpu           = "2"
      memory        = "4Gi"
      env           = { OMPI_MCA_plm_rsh_num_concurrent = "64" }
      node_selector = { "node.kubernetes.io/pool" = "cpu" }
      tolerations   = []
    }
  }
}
