package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// restrictedSecurityContext is security_context as the docs' example for Pod Security
// "restricted" writes it.
func restrictedSecurityContext(t *testing.T) string {
	raw, err := os.ReadFile("../../examples/resources/training_pytorch_job/restricted.tf")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?ms)^  security_context = \{\n.*?^  \}\n`).FindString(string(raw))
	if block == "" {
		t.Fatal("the restricted example has no security_context")
	}
	return block
}

// restrictedJobs is a job of every kind in namespace ns, each with extra, on the local cluster's
// GPU nodes (every node is tainted); the TrainJob runs on restrictedRuntime.
func restrictedJobs(ns, extra string) string {
	extra = "  tolerations = [\"gpu_node\"]\n" + extra
	return fmt.Sprintf(`
resource "training_mpi_job" "mpi" {
  name         = "secmpi"
  namespace    = %[1]q
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "python", "/train.py"]
  worker_count = 2
  # sshd as mpiuser, as mpi-operator's own images run it
  ssh_auth_mount_path = "/home/mpiuser/.ssh"
  worker_command      = ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]
%[2]s}

resource "training_tf_job" "tf" {
  name         = "sectf"
  namespace    = %[1]q
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 2
%[2]s}

resource "training_pytorch_job" "pytorch" {
  name         = "secpytorch"
  namespace    = %[1]q
  image        = "pytorch/pytorch:2.5.1"
  command      = ["torchrun", "/train.py"]
  worker_count = 2
%[2]s}

resource "training_train_job" "train" {
  name      = "sectrain"
  namespace = %[1]q
  runtime   = training_runtime.torch.name
  runtime_kind = "TrainingRuntime"
  num_nodes = 2
%[2]s}
`, ns, extra)
}

// restrictedElasticJob is an elastic job in namespace ns with extra.
func restrictedElasticJob(ns, extra string) string {
	return fmt.Sprintf(`
resource "training_elastic_job" "elastic" {
  name         = "secelastic"
  namespace    = %[1]q
  image        = "torchelastic/examples:0.2.0"
  script       = "/workspace/train.py"
  worker_count = 2
  elastic  = { min_workers = 1, max_workers = 3 }
%[2]s}
`, ns, "  tolerations = [\"gpu_node\"]\n"+extra)
}

// restrictedRuntime is the namespaced torch runtime the TrainJob of restrictedJobs runs on.
func restrictedRuntime(ns string) string {
	return fmt.Sprintf(`
resource "training_runtime" "torch" {
  name      = "sectorch"
  namespace = %q
  framework = "torch"
  image     = "pytorch/pytorch:2.5.1"
  command   = ["torchrun", "/train.py"]
}
`, ns)
}

// In a namespace that enforces Pod Security "restricted", the plan of a job of every kind without
// a security context warns, naming each role the admission would refuse and what it lacks (a
// warning: the API server's admission configuration may exempt them, which no client can read);
// an elastic job's plan refuses a seccomp profile, which FrameworkController v1.0.1 drops. Applied, such a
// job fails with the API server's refusal. With security_context as the docs show it, every other
// job's operator makes all its pods (an MPI job's with its SSH keys where ssh_auth_mount_path puts
// them, for mpiuser's sshd; PyTorchJob workers with training-operator's own init container), the
// pods run as the user given, the next plan is empty, and destroy leaves nothing. A job that runs in
// a namespace which starts enforcing "restricted" afterwards changes its labels with no word of
// Pod Security (no pod is made), and the plan of its scale-up warns (new pods are).
func TestAccPodSecurity_jobsRunInARestrictedNamespaceWithTheDocumentedSecurityContextAndThePlanSaysWhyNot(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	ctx := context.Background()
	const enforce = "pod-security.kubernetes.io/enforce"
	ns := a.namespace("tf-acc-restricted", map[string]string{enforce: "restricted"})
	noJobsLeft := func(after string) {
		for _, kind := range jobs.Kinds() {
			list, err := a.dyn.Resource(kind.GVR).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) > 0 {
				t.Errorf("%s left %s objects in %s: %d (%v)", after, kind.Object, ns, len(list.Items), err)
			}
		}
	}
	warnings := func(w *workspace) string {
		out, err := w.try(nil, "plan", "-json", "-detailed-exitcode", "-input=false")
		if code := exitCode(err); code != 2 {
			t.Fatalf("the plan's exit code is %d (%v), want 2 (changes, no error):\n%s", code, err, out)
		}
		return flat(fmt.Sprint(planDiagnostics(t, out)))
	}

	w := newWorkspace(t)
	w.write(providerConfig() + restrictedRuntime(ns))
	w.run("apply", "-auto-approve", "-input=false")

	w.write(providerConfig() + restrictedRuntime(ns) + restrictedJobs(ns, "") + restrictedElasticJob(ns, ""))
	said := warnings(w)
	for _, want := range []string{
		"MPIJob " + ns + "/secmpi may be created without its launcher pods",
		"MPIJob " + ns + "/secmpi may be created without its worker pods",
		"TFJob " + ns + "/sectf may be created without its worker pods",
		"PyTorchJob " + ns + "/secpytorch may be created without its master pods",
		"Framework " + ns + "/secelastic may be created without its etcd pods",
		"TrainJob " + ns + "/sectrain may be created without its node pods",
		`enforces Pod Security "restricted:latest"`,
		`allowPrivilegeEscalation != false (container "worker" must set securityContext.allowPrivilegeEscalation=false)`,
		"seccompProfile (pod or container",
		"Unless the API server's admission configuration exempts them",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("the plan does not warn %q: %s", want, said)
		}
	}
	noJobsLeft("a plan")

	// FrameworkController v1.0.1 drops the seccomp profile of the pods it makes (and of the
	// Framework): the plan refuses one, saying why.
	w.write(providerConfig() + restrictedRuntime(ns) + restrictedElasticJob(ns, restrictedSecurityContext(t)))
	out, err := w.try(nil, "plan", "-json", "-detailed-exitcode", "-input=false")
	if code := exitCode(err); code != 1 || !strings.Contains(flat(out), "FrameworkController v1.0.1 makes its pods with Kubernetes 1.16's types, which have no seccompProfile") {
		t.Errorf("the plan of an elastic job with a seccomp profile exits %d, want 1 with FrameworkController's reason: %s", code, out)
	}

	// Where the API server does refuse, the apply says so with its reason.
	refused := newWorkspace(t)
	refused.write(providerConfig() + fmt.Sprintf(`
resource "training_tf_job" "refused" {
  name         = "secrefused"
  namespace    = %q
  image        = "tensorflow/tensorflow:2.15.0"
  command      = ["python", "/train.py"]
  worker_count = 1
  tolerations  = ["gpu_node"]
}
`, ns))
	if out, err := refused.try(nil, "apply", "-auto-approve", "-input=false"); err == nil || !strings.Contains(flat(out), "violates PodSecurity") {
		t.Errorf("the apply of a job whose pods the API server refuses does not fail with its reason (%v):\n%s", err, out)
	}
	refused.run("destroy", "-auto-approve", "-input=false")

	w.write(providerConfig() + restrictedRuntime(ns) + restrictedJobs(ns, restrictedSecurityContext(t)))
	w.run("apply", "-auto-approve", "-input=false")
	pods, err := a.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perJob := map[string]int{}
	initPyTorch := 0
	for _, p := range pods.Items {
		perJob[strings.SplitN(p.Name, "-", 2)[0]]++
		if sc := p.Spec.SecurityContext; sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) != 1000 {
			t.Errorf("pod %s runs without the security context given: %+v", p.Name, sc)
		}
		for _, c := range p.Spec.InitContainers {
			if c.Name == "init-pytorch" {
				initPyTorch++
			}
		}
		if strings.HasPrefix(p.Name, "secmpi-") {
			// mpi-operator mounts the job's SSH keys where ssh_auth_mount_path says.
			mounted := false
			for _, m := range p.Spec.Containers[0].VolumeMounts {
				mounted = mounted || m.MountPath == "/home/mpiuser/.ssh"
			}
			if !mounted {
				t.Errorf("MPI pod %s does not have the SSH keys in /home/mpiuser/.ssh: %+v", p.Name, p.Spec.Containers[0].VolumeMounts)
			}
		}
	}
	// MPI: launcher and 2 workers; TF: 2 workers; PyTorch: a master and 2 workers; TrainJob: 2
	// nodes.
	for job, want := range map[string]int{"secmpi": 3, "sectf": 2, "secpytorch": 3, "sectrain": 2} {
		if perJob[job] < want {
			t.Errorf("job %s has %d pods in the restricted namespace, want %d (all: %v)", job, perJob[job], want, perJob)
		}
	}
	if initPyTorch != 2 {
		t.Errorf("%d PyTorchJob workers with training-operator's init container, want 2", initPyTorch)
	}
	w.planIsEmpty()
	w.run("destroy", "-auto-approve", "-input=false")
	noJobsLeft("destroy")

	// A job running where "restricted" is enforced only afterwards: a change of its labels makes
	// no pod and says nothing of Pod Security; its scale-up makes pods and warns.
	later := a.namespace("tf-acc-later", nil)
	job := func(workers int, labels string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "later" {
  name         = "seclater"
  namespace    = %q
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "python", "/train.py"]
  worker_count = %d
  tolerations  = ["gpu_node"]
  labels       = { team = %q }
}
`, later, workers, labels)
	}
	lw := newWorkspace(t)
	lw.write(job(1, "vision"))
	lw.run("apply", "-auto-approve", "-input=false")
	if _, err := a.kube.CoreV1().Namespaces().Patch(ctx, later, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"`+enforce+`":"restricted"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	lw.write(job(1, "speech"))
	if said := warnings(lw); strings.Contains(said, "Pod Security") {
		t.Errorf("the plan of a label change warns of Pod Security, though it makes no pod: %s", said)
	}
	lw.write(job(2, "vision"))
	if said := warnings(lw); !strings.Contains(said, "MPIJob "+later+"/seclater may be created without its worker pods") {
		t.Errorf("the plan of a scale-up in a namespace that now enforces restricted does not warn: %s", said)
	}
	lw.write(job(1, "vision"))
	lw.run("destroy", "-auto-approve", "-input=false")
}
