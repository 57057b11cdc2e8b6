# The operators of the job resources, at the versions the provider is tested with
# (Requirements), and Kueue with every job kind's integration.

resource "helm_release" "kueue" {
  name             = "kueue"
  repository       = "oci://registry.k8s.io/kueue/charts"
  chart            = "kueue"
  version          = "0.19.2"
  namespace        = "kueue-system"
  create_namespace = true
  # The chart takes the manager's configuration as one document: the chart's defaults with the
  # frameworks of every job kind (its own list leaves out PyTorchJob and TFJob).
  values = [yamlencode({ managerConfig = { controllerManagerConfigYaml = file("${path.module}/../kueue-config.yaml") } })]
}

# Kubeflow Trainer with the JobSet it runs TrainJobs through (the chart installs JobSet v0.12.0)
# and Trainer's ClusterTrainingRuntimes.
resource "helm_release" "trainer" {
  name             = "kubeflow-trainer"
  repository       = "oci://ghcr.io/kubeflow/charts"
  chart            = "kubeflow-trainer"
  version          = "2.3.0"
  namespace        = "kubeflow-system"
  create_namespace = true
  set = [{
    name  = "runtimes.defaultEnabled"
    value = "true"
  }]
}

# mpi-operator publishes one manifest, applied object by object (server-side: its CRD is too
# large for a client-side apply).
data "http" "mpi_operator" {
  url = "https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.2/deploy/v2beta1/mpi-operator.yaml"
}

resource "kubernetes_manifest" "mpi_operator" {
  for_each = {
    for m in provider::kubernetes::manifest_decode_multi(data.http.mpi_operator.response_body) :
    "${m.kind}/${try(m.metadata.namespace, "")}/${m.metadata.name}" => m
  }
  manifest = each.value
}

# training-operator publishes no chart: its kustomization, without MPIJobs
# (../training-operator), applied with the kubectl that is configured for the cluster.
resource "terraform_data" "training_operator" {
  triggers_replace = filesha256("${path.module}/../training-operator/kustomization.yaml")
  input            = abspath("${path.module}/../training-operator")

  provisioner "local-exec" {
    command = "kubectl apply --server-side -k ${self.input}"
  }
  provisioner "local-exec" {
    when    = destroy
    command = "kubectl delete --ignore-not-found -k ${self.input}"
  }
  depends_on = [kubernetes_manifest.mpi_operator]
}
