# A log shipper beside every pod: a native sidecar (an init container with restartPolicy
# Always, which starts before the training and stops after it) reading the logs the training
# writes to a shared emptyDir, mounted in the training's own container ("pytorch") by its name.
locals {
  log_shipper = yamlencode({
    spec = {
      initContainers = [{
        name          = "log-shipper"
        image         = "registry.example.com/fluent-bit:3"
        restartPolicy = "Always"
        volumeMounts  = [{ name = "logs", mountPath = "/logs", readOnly = true }]
      }]
      volumes    = [{ name = "logs", emptyDir = {} }]
      containers = [{ name = "pytorch", volumeMounts = [{ name = "logs", mountPath = "/logs" }] }]
    }
  })
}

resource "training_pytorch_job" "with_sidecar" {
  name         = "pytorch-logged"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py", "--log-dir", "/logs"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]
  pod_patch    = { master = local.log_shipper, worker = local.log_shipper }
}
