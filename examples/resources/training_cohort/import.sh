# A Cohort is imported by name.
terraform import training_cohort.research research
