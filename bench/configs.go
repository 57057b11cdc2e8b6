package main

import (
	"fmt"
	"strings"
)

// Every tool manages the same N jobs, a quarter of each kind: elastic Horovod MPIJobs, TFJobs,
// elastic PyTorchJobs and elastic PyTorch Frameworks with their own etcd (the Framework, its two
// Services and its etcd's NetworkPolicy), all in a namespace of the tool's own. var.workers is
// the worker count of the three elastic kinds; the rescale raises it from 1 to 2, in place for
// every tool. The TFJobs keep one worker: a TensorFlow cluster cannot take a new size in place,
// so this provider would replace them, while the manifests would patch them into jobs whose
// TF_CONFIG is wrong.
//
// The peers apply the very objects this provider made: after its first apply and its first
// rescale, the bench reads them back from the cluster, without what the server and the
// operators wrote (status, UID, owner references, a Service's cluster IP), into one YAML file
// per object (see dumpManifests).

// mix is how many jobs of each kind N jobs hold.
type mix struct{ mpi, tf, pytorch, elastic int }

func mixOf(n int) mix { return mix{(n + 3) / 4, (n + 2) / 4, (n + 1) / 4, n / 4} }

const header = `terraform {
  required_providers {
    %s
  }
}

variable "workers" {
  type = number
}

variable "manifests" {
  type    = string
  default = ""
}
`

// trainingConfig is the training tool's configuration, in its namespace bench-training.
func trainingConfig(n int) string { return trainingConfigIn("bench-training")(n) }

// crowdedConfig is the same jobs in the namespace bench-crowded, which also holds the
// unrelated pods (see createUnrelatedPods).
func crowdedConfig(n int) string { return trainingConfigIn("bench-crowded")(n) }

// queuedConfig is the same jobs in the namespace bench-queued, the MPI, TF and PyTorch jobs
// submitted to a LocalQueue of a ClusterQueue with room for them all (Kueue runs no Framework).
func queuedConfig(n int) string {
	blocks := strings.Split(trainingConfigIn("bench-queued")(n), "\nresource ")
	for i, b := range blocks {
		for _, typ := range []string{`"training_mpi_job"`, `"training_tf_job"`, `"training_pytorch_job"`} {
			if strings.HasPrefix(b, typ) {
				blocks[i] = strings.Replace(b, "\n  image ", "\n  queue_name   = training_local_queue.bench.name\n  image ", 1)
			}
		}
	}
	return strings.Join(blocks, "\nresource ") + `
resource "training_resource_flavor" "bench" {
  name = "bench-default"
}

resource "training_cluster_queue" "bench" {
  name = "bench-queued"
  resource_group {
    covered_resources = ["cpu", "memory"]
    flavor {
      name = training_resource_flavor.bench.name
      resource {
        name          = "cpu"
        nominal_quota = "10000"
      }
      resource {
        name          = "memory"
        nominal_quota = "100Ti"
      }
    }
  }
}

resource "training_local_queue" "bench" {
  name          = "bench"
  namespace     = "bench-queued"
  cluster_queue = training_cluster_queue.bench.name
}
`
}

// trainingConfigIn is the configuration of this provider's N jobs in namespace.
func trainingConfigIn(namespace string) func(n int) string {
	return func(n int) string {
		m := mixOf(n)
		return fmt.Sprintf(header, `training = { source = "kubetrain/training" }`) + fmt.Sprintf(`
resource "training_mpi_job" "mpi" {
  count        = %[1]d
  name         = "mpi-${count.index}"
  namespace    = %[5]q
  image        = "horovod/horovod:0.28.1"
  command      = ["python", "train.py"]
  worker_count = var.workers
  tolerations  = ["all"]
  elastic = {
    min_workers = 1
    max_workers = 4
  }
}

resource "training_tf_job" "tf" {
  count        = %[2]d
  name         = "tf-${count.index}"
  namespace    = %[5]q
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "train.py"]
  worker_count = 1
  tolerations  = ["all"]
}

resource "training_pytorch_job" "pytorch" {
  count        = %[3]d
  name         = "pytorch-${count.index}"
  namespace    = %[5]q
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  command      = ["torchrun", "train.py"]
  worker_count = var.workers
  tolerations  = ["all"]
  elastic = {
    min_workers = 1
    max_workers = 4
  }
}

resource "training_elastic_job" "elastic" {
  count        = %[4]d
  name         = "elastic${count.index}"
  namespace    = %[5]q
  image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
  script       = "train.py"
  worker_count = var.workers
  elastic  = { min_workers = 1, max_workers = 4 }
  tolerations  = ["all"]
  roles        = { etcd = { tolerations = ["all"] } }
}
`, m.mpi, m.tf, m.pytorch, m.elastic, namespace)
	}
}

// trainingQuery lists every job of the training tool's namespace, resources included, as a
// migration's `terraform query -generate-config-out` does.
func trainingQuery() string {
	var b strings.Builder
	for _, kind := range []string{"mpi", "tf", "pytorch", "elastic"} {
		fmt.Fprintf(&b, `list "training_%[1]s_job" "all" {
  provider         = training
  include_resource = true
  config {
    namespace = "bench-training"
  }
}
`, kind)
	}
	return b.String()
}

// The peers' wait for a running job: the Kubeflow operators' Running condition, and a
// Framework's state.
const (
	kubectlRunning = `  wait_for {
    condition {
      type   = "Running"
      status = "True"
    }
  }`
	// kubectlWorkersRunning also waits, as this provider does, until the operator counts the
	// new number of workers active (a rescale leaves the Running condition as it was).
	kubectlWorkersRunning = `  wait_for {
    condition {
      type   = "Running"
      status = "True"
    }
    field {
      key   = "status.replicaStatuses.Worker.active"
      value = "${var.workers}"
    }
  }`
	kubectlFrameworkRunning = `  wait_for {
    field {
      key   = "status.state"
      value = "AttemptRunning"
    }
  }`
	kubernetesRunning = `  wait {
    condition {
      type   = "Running"
      status = "True"
    }
  }`
	kubernetesFrameworkRunning = `  wait {
    fields = {
      "status.state" = "AttemptRunning"
    }
  }`
)

// peerConfig is the configuration of a manifest resource type: one resource per object, the
// objects read from var.manifests, waiting for what the waits say (running on apply and rescale,
// with the new number of workers active where the peer can say so;
// kubectl_manifest's wait = true, for gone on destroy, is in extra). The elastic jobs' Services
// and NetworkPolicies come first, as this provider makes them before the Framework.
func peerConfig(n int, typ, body string, running, workersRunning, frameworkRunning, extra string) string {
	m := mixOf(n)
	namespace := "bench-" + strings.TrimSuffix(typ, "_manifest")
	file := func(workers, kind string) string {
		return fmt.Sprintf(`replace(file("${var.manifests}/w%s/%s-${count.index}.yaml"), %q, %q)`, workers, kind, namespacePlaceholder, namespace)
	}
	var b strings.Builder
	for _, r := range []struct {
		name, workers string
		count         int
		wait          string
	}{
		{"mpi", "${var.workers}", m.mpi, workersRunning},
		{"tf", "1", m.tf, running},
		{"pytorch", "${var.workers}", m.pytorch, workersRunning},
		{"elastic-dep", "${var.workers}", 3 * m.elastic, ""},
		{"elastic", "${var.workers}", m.elastic, frameworkRunning},
	} {
		name := strings.ReplaceAll(r.name, "-", "_")
		dependsOn := ""
		if r.name == "elastic" {
			dependsOn = "  depends_on = [" + typ + ".elastic_dep]\n"
		}
		value := file(r.workers, r.name)
		if body == "manifest" {
			value = "yamldecode(" + value + ")"
		}
		fmt.Fprintf(&b, "\nresource %q %q {\n  count = %d\n  %s = %s\n%s%s\n%s}\n", typ, name, r.count, body, value, extra, r.wait, dependsOn)
	}
	return b.String()
}

func kubernetesConfig(n int) string {
	return fmt.Sprintf(header, `kubernetes = { source = "hashicorp/kubernetes" }`) +
		peerConfig(n, "kubernetes_manifest", "manifest", kubernetesRunning, kubernetesRunning, kubernetesFrameworkRunning, "")
}

func kubectlConfig(n int) string {
	return fmt.Sprintf(header, `kubectl = { source = "alekc/kubectl" }`) +
		peerConfig(n, "kubectl_manifest", "yaml_body", kubectlRunning, kubectlWorkersRunning, kubectlFrameworkRunning, "  wait = true\n")
}

// floorConfig is Terraform's own cost for N resources holding the jobs' settings, with no
// provider process and no API call.
func floorConfig(n int) string { return dataConfig(n, "terraform_data", "") }

// pluginFloorConfig is floorConfig's resources served by bench/schemafloor/plugin, a provider
// doing nothing: what a plugin process costs Terraform for them.
func pluginFloorConfig(n int) string {
	return dataConfig(n, "training_floor_data", `training = { source = "kubetrain/training" }`)
}

// dataConfig is N resources of a type whose one attribute, input, holds the jobs' settings.
func dataConfig(n int, resourceType, providers string) string {
	m := mixOf(n)
	var b strings.Builder
	fmt.Fprintf(&b, header, providers)
	for _, r := range []struct {
		kind  string
		count int
	}{{"mpi", m.mpi}, {"tf", m.tf}, {"pytorch", m.pytorch}, {"elastic", m.elastic}} {
		fmt.Fprintf(&b, `
resource %q %q {
  count = %d
  input = {
    name         = "%s-${count.index}"
    namespace    = "bench-floor"
    image        = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    command      = ["python", "train.py"]
    worker_count = var.workers
    tolerations  = ["all"]
    elastic      = { min_workers = 1, max_workers = 4 }
  }
}
`, resourceType, r.kind, r.count, r.kind)
	}
	return b.String()
}
