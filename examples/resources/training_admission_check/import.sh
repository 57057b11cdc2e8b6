# An AdmissionCheck of MultiKueue is imported by name.
terraform import training_admission_check.fleet gpu-fleet
