# The levels of the data centre, widest first: GPU nodes labelled with their block and rack.
resource "training_topology" "dc" {
  name   = "dc"
  levels = ["cloud.example.com/block", "cloud.example.com/rack", "kubernetes.io/hostname"]
}

# A flavor of those nodes names the topology: Kueue places the pods it admits here level by
# level, keeping a job's pods in as few blocks and racks as it can.
resource "training_resource_flavor" "gpu_tas" {
  name          = "gpu-tas"
  node_labels   = { "nvidia.com/gpu.present" = "true" }
  tolerations   = ["nvidia.com/gpu"]
  topology_name = training_topology.dc.name

  # Kueue keeps a Topology while a flavor names it: replacing the Topology (new levels)
  # replaces its flavor first.
  lifecycle {
    replace_triggered_by = [training_topology.dc]
  }
}
