# In a namespace labelled pod-security.kubernetes.io/enforce=restricted: the pods run as a
# non-root user with the runtime's seccomp profile, no privilege escalation and no capabilities.
# The plan checks the pods against the namespace's enforced level and says what a role lacks.
resource "training_pytorch_job" "restricted" {
  name         = "pytorch-restricted"
  namespace    = "ml-restricted"
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "/workspace/train.py"]
  worker_count = 2
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]

  security_context = {
    run_as_non_root            = true
    run_as_user                = 1000
    run_as_group               = 1000
    fs_group                   = 1000
    seccomp_profile            = "RuntimeDefault"
    allow_privilege_escalation = false
    drop_capabilities          = ["ALL"]
  }
}
