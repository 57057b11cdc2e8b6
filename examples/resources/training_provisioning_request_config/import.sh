# A ProvisioningRequestConfig is imported by name.
terraform import training_provisioning_request_config.dws dws
