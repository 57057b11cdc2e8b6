# An elastic job is imported by namespace and name: a Framework with an etcd and a worker task role,
# whether this provider, kubectl or another tool made it.
terraform import training_elastic_job.train default/train
