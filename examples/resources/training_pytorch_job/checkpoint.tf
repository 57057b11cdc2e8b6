# A PyTorchJob that saves to an NFS share (here Amazon EFS) that its pods mount through
# pod_patch, and one that saves to S3. The provider sets TRAINING_CHECKPOINT_PATH and
# TRAINING_CHECKPOINT_SAVE_SECONDS in every pod, so the program reads where to save and how long
# it has; the plan sees that the share outlives the pods, and says that it trusts the program to
# keep what it saves to S3.
resource "training_pytorch_job" "llama" {
  name         = "llama-ft"
  image        = "registry.example.com/ml/llama-ft:2.1"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 4
  gpus         = 8
  tolerations  = ["nvidia.com/gpu"]
  pod_patch = { for role in ["master", "worker"] : role => yamlencode({ spec = {
    volumes    = [{ name = "checkpoints", nfs = { server = "fs-0a1b2c3d.efs.eu-west-1.amazonaws.com", path = "/" } }]
    containers = [{ name = "pytorch", volumeMounts = [{ name = "checkpoints", mountPath = "/checkpoints" }] }]
  } }) }
  checkpoint = { path = "/checkpoints/llama-ft", save_seconds = 25 }
}

resource "training_pytorch_job" "llama_s3" {
  name         = "llama-ft-s3"
  image        = "registry.example.com/ml/llama-ft:2.1"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 4
  gpus         = 8
  tolerations  = ["nvidia.com/gpu"]
  env_secret   = { AWS_SECRET_ACCESS_KEY = { secret = "s3-checkpoints", key = "secret-key" } }
  env          = { AWS_ACCESS_KEY_ID = "AKIAEXAMPLE" }
  checkpoint   = { path = "s3://team-checkpoints/llama-ft", save_seconds = 25 }
}
