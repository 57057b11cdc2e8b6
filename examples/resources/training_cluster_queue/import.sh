# A ClusterQueue is imported by name.
terraform import training_cluster_queue.vision vision
