# A TFJob is imported by namespace and name.
terraform import training_tf_job.dist default/tf-dist
