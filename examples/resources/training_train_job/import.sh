# A TrainJob is imported by namespace and name.
terraform import training_train_job.resnet default/resnet
