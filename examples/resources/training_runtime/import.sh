# A ClusterTrainingRuntime is imported by name, a TrainingRuntime as NAMESPACE/NAME.
terraform import training_runtime.torch torch-gpu
terraform import training_runtime.mpi vision/mpi-pi
