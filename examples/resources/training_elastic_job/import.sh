# An elastic job is imported by namespace and name (of a Framework this provider created).
terraform import training_elastic_job.pet default/pet
