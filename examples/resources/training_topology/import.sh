# A Topology is imported by name.
terraform import training_topology.dc dc
