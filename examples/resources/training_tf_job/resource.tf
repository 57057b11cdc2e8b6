# arena submit tf --name=tf-dist --workers=2 --ps=1 --chief --gpus=1 --toleration gpu_node ...
# The seed says tolerations apply to MPI and TF jobs: this one runs only where gpu_node is tolerated.
resource "training_tf_job" "dist" {
  name         = "tf-dist"
  image        = "tensorflow/tensorflow:2.15.0-gpu"
  command      = ["python", "/workspace/tf_cnn_benchmarks.py", "--model=resnet50"]
  worker_count = 2
  ps_count     = 1
  roles        = { ps = { cpu = "4" } }
  chief        = true
  gpus         = 1
  tolerations  = ["gpu_node"]
}
