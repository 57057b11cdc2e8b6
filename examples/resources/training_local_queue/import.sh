# A LocalQueue is imported as NAMESPACE/NAME.
terraform import training_local_queue.vision default/vision
