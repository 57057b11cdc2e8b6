# A WorkloadPriorityClass is imported by name.
terraform import training_workload_priority_class.release release
