# Every mpi job of the vision team's namespace that runs, whoever made it (Arena labels its jobs
# release=NAME). terraform query -generate-config-out=generated.tf writes a resource and an import
# block for each; terraform apply then imports them without changing them.
list "training_mpi_job" "vision" {
  provider         = training
  include_resource = true
  config {
    namespace      = "vision"
    label_selector = "release"
    status         = "RUNNING"
  }
}
