# Restart the job from its checkpoint whenever an apply rolls out a new GPU driver version to
# its node pool (the pipeline's variable): the pods start again on the new driver.
variable "gpu_driver" {
  type    = string
  default = "550.90.07"
}

resource "terraform_data" "gpu_driver" {
  input = var.gpu_driver

  lifecycle {
    action_trigger {
      events  = [after_update]
      actions = [action.training_restart_job.finetune]
    }
  }
}
