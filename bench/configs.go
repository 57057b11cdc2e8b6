package main

import (
	"fmt"
	"strings"
	"time"
)

// Every tool manages the same N MPIJobs: a launcher and var.workers workers tolerating
// ssd_node, in a namespace of its own. The rescale changes var.workers for all of them.
const header = `terraform {
  required_providers {
    %s
  }
}

variable "workers" {
  type = number
}

variable "kubeconfig" {
  type    = string
  default = null
}
`

const manifest = `{
    apiVersion = "kubeflow.org/v2beta1"
    kind       = "MPIJob"
    metadata   = { name = "bench-${count.index}", namespace = %q }
    spec = {
      slotsPerWorker = 1
      runPolicy      = { cleanPodPolicy = "Running" }
      mpiReplicaSpecs = {
        Launcher = {
          replicas = 1
          template = { spec = {
            tolerations = [{ key = "ssd_node", operator = "Exists" }]
            containers  = [{ name = "launcher", image = "horovod", command = ["mpirun", "python", "train.py"] }]
          } }
        }
        Worker = {
          replicas = var.workers
          template = { spec = {
            tolerations = [{ key = "ssd_node", operator = "Exists" }]
            containers  = [{ name = "worker", image = "horovod", command = ["/usr/sbin/sshd", "-De"] }]
          } }
        }
      }
    }
  }`

func trainingConfig(n int) string {
	return fmt.Sprintf(header, `training = { source = "kubetrain/training" }`) + fmt.Sprintf(`
resource "training_mpi_job" "job" {
  count        = %d
  name         = "bench-${count.index}"
  namespace    = "bench-training"
  image        = "horovod"
  command      = ["python", "train.py"]
  worker_count = var.workers
  tolerations  = ["ssd_node"]
  wait_for     = "created"
  # Elastic Horovod, so that a new worker count is an in-place patch of the replicas, as the
  # peers' manifests do it (a plain mpirun job is replaced instead).
  elastic {
    min_workers = 1
    max_workers = 8
  }
}
`, n)
}

// trainingQuery lists the jobs of the training tool's namespace, resources included, as a
// migration's `terraform query -generate-config-out` does.
const trainingQuery = `list "training_mpi_job" "all" {
  provider         = training
  include_resource = true
  config {
    namespace = "bench-training"
  }
}
`

func kubernetesConfig(n int) string {
	return fmt.Sprintf(header, `kubernetes = { source = "hashicorp/kubernetes" }`) + fmt.Sprintf(`
resource "kubernetes_manifest" "job" {
  count    = %d
  manifest = %s
}
`, n, fmt.Sprintf(manifest, "bench-kubernetes"))
}

func kubectlConfig(n int) string {
	return fmt.Sprintf(header, `kubectl = { source = "alekc/kubectl" }`) + fmt.Sprintf(`
resource "kubectl_manifest" "job" {
  count     = %d
  yaml_body = yamlencode(%s)
}
`, n, fmt.Sprintf(manifest, "bench-kubectl"))
}

// floorConfig is Terraform's own cost for N resources holding the same data, with no provider
// process and no API call.
func floorConfig(n int) string {
	return fmt.Sprintf(header, "") + fmt.Sprintf(`
resource "terraform_data" "job" {
  count = %d
  input = %s
}
`, n, fmt.Sprintf(manifest, "bench-floor"))
}

func renderReport(results map[string]map[int]map[string]measurement, ns []int, runs, slowRuns int, rawGET time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks: this provider beside kubernetes_manifest, kubectl_manifest and Terraform's floor\n\n")
	fmt.Fprintf(&b, "Produced by `make bench` (`cd bench && go run . -n %s -runs %d -slow-runs %d`) on %s, in one run on one local cluster "+
		"(no operators: objects only, as no tool waits for pods). Times are medians of %d runs (kubernetes_manifest above 10 jobs: %d run%s), "+
		"wall clock of the whole `terraform` command at its default parallelism of 10. Requests are API requests per job, counted by a proxy in "+
		"front of the API server. RSS is the peak resident memory of any one provider process (Terraform starts several per command).\n\n",
		joinInts(ns), runs, slowRuns, time.Now().UTC().Format("2006-01-02"), runs, slowRuns, plural(slowRuns))
	fmt.Fprintf(&b, "What each tool does, as configured here (the configurations are in bench/configs.go):\n\n"+
		"- **training_mpi_job**, `wait_for = \"created\"`: apply waits for the API's answer to the create; a refresh reads the whole MPIJob "+
		"(one GET) and lists its pods (one LIST, for `instances`), and compares every attribute the provider sets (image, command, env, "+
		"resources, tolerations, run policy, labels, annotations, ...), so any change made outside Terraform shows in the plan; the rescale "+
		"is a guarded JSON patch of the worker replicas, then a merge patch of whatever else differs (nothing here); destroy deletes with "+
		"foreground propagation and watches until the MPIJob and its pods are gone.\n"+
		"- **kubernetes_manifest**, no `wait` block: apply waits for the server-side apply's answer; a refresh reads the object and compares "+
		"the manifest's fields.\n"+
		"- **kubectl_manifest**, default `wait` (false): apply waits for the create's answer; a refresh reads the object and compares the "+
		"fields of `yaml_body`; destroy does not wait for the object to be gone.\n"+
		"- **terraform_data**: no provider and no API call; Terraform's own cost for N resources holding the same data.\n"+
		"- **query** (this provider only, run by Terraform %s): `terraform query` of the `training_mpi_job` list resource with "+
		"`include_resource`, which finds every job of the namespace with one LIST and reads each back in the provider's words, as a migration does; "+
		"the peers have no list resource.\n\n", queryVersion())
	fmt.Fprintf(&b, "Raw API cost: 50 sequential GETs over one client-go connection took %s.\n", rawGET.Round(time.Millisecond))
	training := "training_mpi_job"
	for _, n := range ns {
		fmt.Fprintf(&b, "\n## %d jobs\n\n", n)
		fmt.Fprintf(&b, "| operation |")
		for _, t := range tools {
			fmt.Fprintf(&b, " %s |", t.name)
		}
		fmt.Fprintf(&b, " this / kubernetes_manifest | this / kubectl_manifest | this / floor |\n|---|")
		for range tools {
			fmt.Fprintf(&b, "---|")
		}
		fmt.Fprintf(&b, "---|---|---|\n")
		for _, op := range operations {
			fmt.Fprintf(&b, "| %s |", op)
			for _, t := range tools {
				m, ok := results[t.name][n][op]
				if !ok {
					fmt.Fprintf(&b, " - |")
					continue
				}
				cell := fmt.Sprintf("%.2f s", m.seconds)
				if t.provider != "" {
					cell += fmt.Sprintf(", %.1f req/job, %d MiB", float64(m.requests)/float64(n), m.rssKiB/1024)
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
			mine, ok := results[training][n][op]
			for _, peer := range []string{"kubernetes_manifest", "kubectl_manifest", "floor: terraform_data"} {
				other, ok2 := results[peer][n][op]
				if !ok || !ok2 || other.seconds == 0 {
					fmt.Fprintf(&b, " - |")
					continue
				}
				fmt.Fprintf(&b, " %.2f |", mine.seconds/other.seconds)
			}
			fmt.Fprintf(&b, "\n")
		}
	}
	return b.String()
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ",")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
