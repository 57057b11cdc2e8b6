package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// kubectlJobs are jobs as the operators' own examples write them, applied with kubectl: every
// field the operator defaults (run policies, restart policies, slots, the TrainJob's runtime
// kind) left out.
var kubectlJobs = map[*jobs.Kind]string{
	jobs.MPI: `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: pi}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - {name: mpi-launcher, image: mpioperator/mpi-pi:openmpi, command: [mpirun, -n, "2", /home/mpiuser/pi]}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - {name: mpi-worker, image: mpioperator/mpi-pi:openmpi, command: [/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]}
`,
	jobs.PyTorch: `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pytorch-simple}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - {name: pytorch, image: "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727", imagePullPolicy: Always,
             command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]}
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - {name: pytorch, image: "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727", imagePullPolicy: Always,
             command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]}
`,
	jobs.TF: `
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tfjob-simple}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - {name: tensorflow, image: "kubeflow/tf-mnist-with-summaries:latest", command: [python, /var/tf_mnist/mnist_with_summaries.py]}
`,
	jobs.Train: `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: pytorch-simple}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    image: "docker.io/kubeflow/pytorch-mnist:v1"
    command: [torchrun, train.py]
`,
}

// Jobs of every Kubeflow kind made with kubectl as their operators' examples write them are
// brought under Terraform by `terraform query -generate-config-out`: the first plan only
// imports (N to import, 0 to add, 0 to change, 0 to destroy), and after the apply the plan is
// empty. A field left to the operator's default reads as what the generated configuration says.
func TestAccQuery_jobsMadeWithKubectlFromTheOperatorsExamplesImportWithoutAChange(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.14.0", "terraform query")
	t.Parallel()
	ctx := context.Background()
	ns := acctest.RandomWithPrefix("tf-acc-kubectl")
	if _, err := a.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	a.grantNamespace(ns)
	query := ""
	for kind, manifest := range kubectlJobs {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
			t.Fatalf("%s: %v", kind.Object, err)
		}
		obj.SetNamespace(ns)
		if _, err := a.dyn.Resource(kind.GVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("kubectl create %s: %v", kind.Object, err)
		}
		query += fmt.Sprintf(`
list "training_%s_job" "found" {
  provider         = training
  include_resource = true
  config {
    namespace = %q
  }
}
`, kind.Name, ns)
	}
	w := newWorkspace(t)
	w.write(providerConfig())
	if err := os.WriteFile(filepath.Join(w.dir, "migrate.tfquery.hcl"), []byte(query), 0o600); err != nil {
		t.Fatal(err)
	}
	out := w.run("query", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(w.dir, "generated.tf"))
	if err != nil {
		t.Fatalf("no generated configuration: %v\n%s", err, out)
	}
	if n := strings.Count(string(generated), "import {"); n != len(kubectlJobs) {
		t.Fatalf("%d import blocks, want %d:\n%s\n%s", n, len(kubectlJobs), generated, out)
	}
	plan := w.run("plan", "-input=false")
	if want := fmt.Sprintf("Plan: %d to import, 0 to add, 0 to change, 0 to destroy.", len(kubectlJobs)); !strings.Contains(plan, want) {
		t.Errorf("the first plan is not %q:\n%s\n--- generated:\n%s", want, plan, generated)
	}
	w.run("apply", "-auto-approve", "-input=false")
	w.planIsEmpty()
	w.run("destroy", "-auto-approve", "-input=false")
	for kind := range kubectlJobs {
		name := regexp.MustCompile(`name: (\S+)\}`).FindStringSubmatch(kubectlJobs[kind])[1]
		if err := a.waitGone(kind, ns, name); err != nil {
			t.Errorf("destroy left %s %s: %v", kind.Object, name, err)
		}
	}
}
