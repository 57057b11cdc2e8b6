# An MPIJob is imported by namespace and name.
terraform import training_mpi_job.resnet default/resnet-horovod
