# Elastic PyTorch at its own etcd: the etcd Service, the headless worker Service and the Framework
# with its etcd and worker task roles. Change worker_count within the bounds to rescale in place.
# The image needs python-etcd beside torch (pip install python-etcd), for torchrun's etcd
# rendezvous; the etcd tolerates no taint by default and runs on a CPU node.
resource "training_elastic_job" "train" {
  name         = "train"
  image        = "registry.example.com/ml/pytorch-etcd:2.5.1"
  script       = "/workspace/train.py"
  script_args  = ["--checkpoint-dir", "/checkpoints"]
  worker_count = 4
  elastic      = { min_workers = 1, max_workers = 4 }
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]
  data_volumes = ["checkpoints:/checkpoints"]
}
