# arena submit tf --workers=2 --ps=1 --chief --gpus=1: two GPU workers, a chief and a parameter
# server; training-operator gives every task a TF_CONFIG that names the whole cluster.
resource "training_tf_job" "dist" {
  name         = "tf-dist"
  image        = "tensorflow/tensorflow:2.15.0-gpu"
  command      = ["python", "/workspace/train.py", "--model=resnet50"]
  worker_count = 2
  ps_count     = 1
  chief        = true
  gpus         = 1
  tolerations  = ["nvidia.com/gpu"]
  roles        = { ps = { cpu = "4", memory = "16Gi" } }
}
