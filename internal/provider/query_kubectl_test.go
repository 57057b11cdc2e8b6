package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// kubectlJobs are jobs as the operators' own examples write them, applied with kubectl: every
// field the operator defaults (run policies, restart policies, slots, the TrainJob's runtime
// kind) left out; the elastic job is FrameworkController's PyTorch elastic example, its two
// Services and its Framework, as the example writes them (etcd started through sh -c, the
// torchelastic launcher in the workers' shell command).
var kubectlJobs = map[*jobs.Kind]string{
	jobs.Elastic: seedElasticByHand,
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

// seedElasticByHand is FrameworkController's PyTorch elastic example, its two Services and its
// Framework, as the example writes them (the seed document's steps 1-3).
var seedElasticByHand = func() string {
	b, err := os.ReadFile(filepath.Join("..", "jobs", "testdata", "seed-pytorch-elastic.yaml"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// madeObject is an object a test made outside Terraform.
type madeObject struct {
	gvr        schema.GroupVersionResource
	kind, name string
	uid        k8stypes.UID
}

// kubectlCreate creates the objects of a manifest of one or more documents, in its order, in the
// namespace, as kubectl create -f would.
func kubectlCreate(t *testing.T, a *api, kind *jobs.Kind, namespace, manifest string) []madeObject {
	t.Helper()
	var made []madeObject
	for _, doc := range strings.Split(manifest, "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("%s: %v", kind.Object, err)
		}
		obj.SetNamespace(namespace)
		gvr := kind.GVR
		if obj.GetKind() == "Service" {
			gvr = jobs.ServiceGVR
		}
		created, err := a.dyn.Resource(gvr).Namespace(namespace).Create(context.Background(), obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("kubectl create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		made = append(made, madeObject{gvr: gvr, kind: obj.GetKind(), name: obj.GetName(), uid: created.GetUID()})
	}
	return made
}

// Jobs of every kind made with kubectl as their operators' examples write them are
// brought under Terraform by `terraform query -generate-config-out`: the first plan only
// imports (N to import, 0 to add, 0 to change, 0 to destroy), and after the apply the plan is
// empty. A field left to the operator's default reads as what the generated configuration says.
func TestAccQuery_jobsMadeWithKubectlFromTheOperatorsExamplesImportWithoutAChange(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.14.0", "terraform query")
	t.Parallel()
	ns := a.namespace("tf-acc-kubectl", nil)
	query := ""
	var made []madeObject
	for kind, manifest := range kubectlJobs {
		made = append(made, kubectlCreate(t, a, kind, ns, manifest)...)
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
	// What the CRDs and operators write into every stored job's spec (mpi-operator's defaults,
	// Trainer's runtimeRef and managedBy) is not taken for what the configuration cannot say.
	if strings.Contains(flat(out), "no attribute for: spec.") || strings.Contains(flat(out), "; spec.") {
		t.Errorf("the query takes a default of a job's spec for a field it cannot say:\n%s", out)
	}
	if !strings.Contains(out, "etcd: containers[etcd].command") {
		t.Errorf("the query does not warn that the elastic job's etcd command cannot be said:\n%s", out)
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
	for _, obj := range made {
		if _, err := a.get(obj.gvr, ns, obj.name); !apierrors.IsNotFound(err) {
			t.Errorf("destroy left %s %s (err=%v)", obj.kind, obj.name, err)
		}
	}
}

// FrameworkController's PyTorch elastic example applied by hand (its two Services, then its
// Framework) is imported by an import block into a configuration that says it: the first plan
// only imports and warns that the etcd's sh -c command cannot be said; after the apply the plan
// is empty and the hand-made Services are the job's dependents; worker_count rescales it in
// place with the example's own patch, and etcd_network_policy adds the etcd's NetworkPolicy in
// place; destroy removes the Framework, both Services and the policy.
func TestAccElasticJob_madeByHandFromTheExampleImportsRescalesInPlaceAndDestroysItsServices(t *testing.T) {
	a := newAPI(t)
	requireCLI(t, "1.5.0", "import blocks")
	t.Parallel()
	ns := a.namespace("tf-acc-byhand", nil)
	made := kubectlCreate(t, a, jobs.Elastic, ns, seedElasticByHand)
	fw, err := a.get(jobs.Elastic.GVR, ns, "pet")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := jobs.ReadElasticJob(fw)
	if err != nil {
		t.Fatal(err)
	}
	command, err := json.Marshal(spec.Command) // in HCL, ${ is written $${
	if err != nil {
		t.Fatal(err)
	}
	config := func(workers int, extra string) string {
		return providerConfig() + fmt.Sprintf(`
import {
  to = training_elastic_job.pet
  id = "%[1]s/pet"
}

resource "training_elastic_job" "pet" {
  name                 = "pet"
  namespace            = %[1]q
  image                = "torchelastic/examples:0.2.0"
  worker_command       = %[2]s
  worker_count         = %[3]d
  elastic              = { min_workers = 1, max_workers = 4 }
  gpus                 = 1
  roles                = { etcd = { image = "quay.io/coreos/etcd:v3.4.9" } }
%[4]s}
`, ns, strings.ReplaceAll(string(command), "${", "$${"), workers, extra)
	}
	w := newWorkspace(t)
	w.write(config(4, "  etcd_network_policy  = false\n"))
	plan := w.run("plan", "-input=false")
	if want := "Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."; !strings.Contains(plan, want) {
		t.Errorf("the first plan is not %q:\n%s", want, plan)
	}
	if flat := strings.Join(strings.Fields(plan), " "); !strings.Contains(flat, "no attribute for: etcd: containers[etcd].command") {
		t.Errorf("the plan does not say that the etcd's command cannot be said:\n%s", plan)
	}
	w.run("apply", "-auto-approve", "-input=false")
	w.planIsEmpty()
	state := w.run("state", "show", "training_elastic_job.pet")
	for _, dependent := range []string{`"Service/pet-etcd"`, `"Service/pet-worker"`} {
		if !strings.Contains(state, dependent) {
			t.Errorf("the hand-made %s is not among the job's dependents:\n%s", dependent, state)
		}
	}

	w.write(config(2, "  etcd_network_policy  = false\n  wait_for             = \"created\"\n"))
	plan = w.run("plan", "-input=false")
	if want := "Plan: 0 to add, 1 to change, 0 to destroy."; !strings.Contains(plan, want) {
		t.Errorf("the rescale is not planned in place (%q):\n%s", want, plan)
	}
	w.run("apply", "-auto-approve", "-input=false")
	fw, err = a.get(jobs.Elastic.GVR, ns, "pet")
	if err != nil {
		t.Fatal(err)
	}
	if fw.GetUID() != made[2].uid {
		t.Errorf("the Framework was made again (uid %s, was %s)", fw.GetUID(), made[2].uid)
	}
	if got, err := jobs.Elastic.Workers(fw); err != nil || got != 2 {
		t.Errorf("the Framework has %d workers (%v) after the rescale, want 2", got, err)
	}
	w.planIsEmpty()

	// The etcd's NetworkPolicy, which the example does not make, is added in place.
	w.write(config(2, "  wait_for             = \"created\"\n"))
	plan = w.run("plan", "-input=false")
	if want := "Plan: 0 to add, 1 to change, 0 to destroy."; !strings.Contains(plan, want) {
		t.Errorf("the etcd's NetworkPolicy is not planned in place (%q):\n%s", want, plan)
	}
	w.run("apply", "-auto-approve", "-input=false")
	if _, err := a.get(jobs.NetworkPolicyGVR, ns, "pet-etcd"); err != nil {
		t.Errorf("no NetworkPolicy pet-etcd after etcd_network_policy = true: %v", err)
	}
	w.planIsEmpty()
	made = append(made, madeObject{gvr: jobs.NetworkPolicyGVR, kind: "NetworkPolicy", name: "pet-etcd"})

	w.run("destroy", "-auto-approve", "-input=false")
	for _, obj := range made {
		if _, err := a.get(obj.gvr, ns, obj.name); !apierrors.IsNotFound(err) {
			t.Errorf("destroy left %s %s (err=%v)", obj.kind, obj.name, err)
		}
	}
}
