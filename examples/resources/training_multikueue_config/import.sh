# A MultiKueueConfig is imported by name.
terraform import training_multikueue_config.fleet gpu-fleet
