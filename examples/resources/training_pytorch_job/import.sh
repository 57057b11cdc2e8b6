# A PyTorchJob is imported by namespace and name.
terraform import training_pytorch_job.dist default/pytorch-dist
