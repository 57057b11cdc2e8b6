# A taint is imported by node, key and effect.
terraform import 'training_node_taint.gpu["gpu-node-1"]' gpu-node-1/nvidia.com/gpu:NoSchedule
