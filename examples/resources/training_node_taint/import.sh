# A taint is imported by node, key and effect.
terraform import training_node_taint.ssd cn-beijing.192.168.3.230/ssd_node:NoSchedule
