# Every TrainJob of the vision team's namespace that runs, whoever made it (the Trainer SDK,
# kubectl). terraform query -generate-config-out=generated.tf writes a resource and an import
# block for each; terraform apply then imports them without changing them.
list "training_train_job" "vision" {
  provider         = training
  include_resource = true
  config {
    namespace = "vision"
    status    = "RUNNING"
  }
}
