# A MultiKueueCluster is imported by name.
terraform import training_multikueue_cluster.east gpu-east
