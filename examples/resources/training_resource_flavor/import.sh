# A ResourceFlavor is imported by name.
terraform import training_resource_flavor.gpu gpu
