package provider

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/cluster/apiproxy"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// interruption says where to stop terraform: at the first request after the nth write (1 when
// unset) of the given verb to the given resource has reached the API server.
type interruption struct {
	name     string
	verb     string // POST, PATCH, DELETE
	resource string // the path's resource segment: frameworks, services
	nth      int
}

// interruptAt returns a proxy hook that, once a matching write has passed, holds the next
// request of the provider, sends sig to terraform's process group and never forwards that
// request: whatever the timing of the signal, the step after the interruption point does not
// reach the API server. It lets the provider go first (SIGKILL: its connection closes;
// SIGINT: it gives the request up), or 10 s. fired is closed once the signal is sent.
func interruptAt(at interruption, sig syscall.Signal, cmd *exec.Cmd) (hook func(*http.Request) bool, fired <-chan struct{}) {
	var mu sync.Mutex
	armed, seen := false, 0
	firedCh := make(chan struct{})
	return func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-firedCh:
			// After SIGKILL nothing of the run is left to ask; after SIGINT the provider's
			// last reads (the status it records) go through as they would.
			return true
		default:
		}
		if !armed {
			if r.Method == at.verb && pathResource(r.URL.Path) == at.resource {
				seen++
			}
			armed = seen >= max(at.nth, 1)
			return true
		}
		// Read the body, so the server watches the connection and the request's context ends
		// when the provider goes.
		_, _ = io.Copy(io.Discard, r.Body)
		_ = syscall.Kill(-cmd.Process.Pid, sig)
		close(firedCh)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return false
	}, firedCh
}

// pathResource is the resource an API path names: .../namespaces/NS/RESOURCE[/NAME].
func pathResource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := range parts {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			return parts[i+2]
		}
	}
	return ""
}

// interrupted runs terraform args with the proxy hook stopping it at at.
func (w *workspace) interrupted(proxy *apiproxy.Proxy, at interruption, sig syscall.Signal, args ...string) {
	w.t.Helper()
	cmd, out := w.command(nil, append(args, "-auto-approve", "-input=false")...)
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	hook, fired := interruptAt(at, sig, cmd)
	proxy.SetHook(hook)
	defer proxy.SetHook(nil)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	// The hook signals terraform before it marks itself fired: after SIGKILL, Wait can return
	// while the hook is between the two, so a moment is allowed for the mark.
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		w.t.Fatalf("terraform %v finished without reaching the interruption point (%v):\n%s", args, err, out)
	}
	if err == nil {
		w.t.Fatalf("terraform %v succeeded although it was interrupted by %v:\n%s", args, sig, out)
	}
	// After SIGKILL the provider may still be on its way out; nothing it does can land once
	// its process group is gone.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

func elasticWorkspaceConfig(kubeconfig, name string, workers int) string {
	return fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig) + elasticResource(name, workers)
}

func elasticResource(name string, workers int) string {
	return fmt.Sprintf(`
resource "training_elastic_job" "test" {
  name         = %q
  image        = "torchelastic/examples:0.2.0"
  script       = "/workspace/train.py"
  worker_count = %d
  elastic  = { min_workers = 1, max_workers = 4 }
  tolerations  = ["all"]
  roles        = { etcd = { tolerations = ["all"] } }
}
`, name, workers)
}

// checkElasticJob checks the API: exactly one Framework of that name with workers workers, its
// two Services owned by it, and exactly its pods, Running.
func checkElasticJob(t *testing.T, a *api, name string, workers int) {
	t.Helper()
	ctx := context.Background()
	fw, err := a.get(jobs.Elastic.GVR, "default", name)
	if err != nil {
		t.Fatalf("Framework %s: %v", name, err)
	}
	if got, err := jobs.Elastic.Workers(fw); err != nil || int(got) != workers {
		t.Errorf("Framework %s has %d workers (%v), want %d", name, got, err, workers)
	}
	services, err := a.kube.CoreV1().Services("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, svc := range services.Items {
		if strings.HasPrefix(svc.Name, name) {
			ours = append(ours, svc.Name)
			if refs := svc.OwnerReferences; len(refs) != 1 || refs[0].UID != fw.GetUID() {
				t.Errorf("Service %s is not owned by Framework %s: %v", svc.Name, name, refs)
			}
		}
	}
	if len(ours) != 2 {
		t.Errorf("Services of %s: %v, want exactly the etcd and worker Services", name, ours)
	}
	if err := a.waitPods(jobs.Elastic.PodSelector(name), func(pods []corev1.Pod) bool {
		for _, p := range pods {
			if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
				return false
			}
		}
		return len(pods) == 1+workers
	}); err != nil {
		t.Error(err)
	}
}

// Interrupting terraform (SIGINT, as Ctrl-C does, or SIGKILL to terraform and the provider) in
// the middle of creating an elastic job (its Services made, its Framework not yet), of a rescale
// (the patch landed, the wait under way) and of a destroy (the Framework deleted, its Services
// not yet) loses nothing: a second apply or destroy converges, with nothing orphaned or
// duplicated, and the plan after it is empty.
func TestAccInterruptedApplyAndDestroyConverge(t *testing.T) {
	a := newAPI(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run("create/"+sig.String(), func(t *testing.T) {
			t.Parallel()
			w, proxy, kubeconfig, name := interruptSetup(t)
			w.write(elasticWorkspaceConfig(kubeconfig, name, 2))
			w.interrupted(proxy, interruption{"between the Services and the Framework", "POST", "services", 2}, sig, "apply")
			// Stopped where meant: both Services made, the Framework not.
			for _, role := range []string{jobs.EtcdRole, jobs.WorkerRole} {
				if _, err := a.kube.CoreV1().Services("default").Get(context.Background(), name+"-"+role, metav1.GetOptions{}); err != nil {
					t.Fatalf("the interrupted apply made no Service %s-%s: %v", name, role, err)
				}
			}
			if _, err := a.get(jobs.Elastic.GVR, "default", name); !apierrors.IsNotFound(err) {
				t.Fatalf("the interrupted apply made the Framework (%v): it was stopped too late", err)
			}
			w.convergeAndDestroy(a, name, 2)
		})
		t.Run("rescale/"+sig.String(), func(t *testing.T) {
			t.Parallel()
			w, proxy, kubeconfig, name := interruptSetup(t)
			w.write(elasticWorkspaceConfig(kubeconfig, name, 1))
			w.run("apply", "-auto-approve", "-input=false")
			w.write(elasticWorkspaceConfig(kubeconfig, name, 3))
			w.interrupted(proxy, interruption{"after the rescale patch", "PATCH", "frameworks", 1}, sig, "apply")
			if fw, err := a.get(jobs.Elastic.GVR, "default", name); err != nil {
				t.Fatal(err)
			} else if workers, _ := jobs.Elastic.Workers(fw); workers != 3 {
				t.Fatalf("the rescale patch had not landed when terraform was stopped: %d workers", workers)
			}
			w.convergeAndDestroy(a, name, 3)
		})
		t.Run("destroy/"+sig.String(), func(t *testing.T) {
			t.Parallel()
			w, proxy, kubeconfig, name := interruptSetup(t)
			w.write(elasticWorkspaceConfig(kubeconfig, name, 2))
			w.run("apply", "-auto-approve", "-input=false")
			w.interrupted(proxy, interruption{"between deleting the Framework and its Services", "DELETE", "frameworks", 1}, sig, "destroy")
			w.run("destroy", "-auto-approve", "-input=false")
			if err := checkNothingLeft(a, name)(nil); err != nil {
				t.Error(err)
			}
			if out := w.run("state", "list"); strings.TrimSpace(out) != "" {
				t.Errorf("state still lists %s", out)
			}
		})
	}
}

func interruptSetup(t *testing.T) (w *workspace, proxy *apiproxy.Proxy, kubeconfig, name string) {
	w = newWorkspace(t)
	proxy, kubeconfig = startProxy(t, apiproxy.Options{})
	return w, proxy, kubeconfig, elasticJobName()
}

// An object of the job's name that this provider did not create from this configuration is
// never taken over: the apply fails with a message that suggests import, and the object is
// left exactly as it was, also by the destroy of the half-made job.
func TestAccForeignObjectsAreNotTakenOver(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	mpi, elastic := mpiJobName(), elasticJobName()
	var foreignJob *unstructured.Unstructured
	var foreignService *corev1.Service
	mpiConfig := providerConfig() + mpiJobBlock("test", mpi, "")
	unchanged := func() {
		now, err := a.get(jobs.MPI.GVR, "default", mpi)
		if err != nil {
			t.Fatal(err)
		}
		// Its operator writes its status; its spec (generation), labels and annotations are what
		// the provider must not touch.
		if now.GetGeneration() != foreignJob.GetGeneration() || !maps.Equal(now.GetLabels(), foreignJob.GetLabels()) ||
			!maps.Equal(now.GetAnnotations(), foreignJob.GetAnnotations()) {
			t.Errorf("the foreign MPIJob was changed: generation %d, labels %v, annotations %v; was %d, %v, %v", now.GetGeneration(),
				now.GetLabels(), now.GetAnnotations(), foreignJob.GetGeneration(), foreignJob.GetLabels(), foreignJob.GetAnnotations())
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					var err error
					foreignJob, err = a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Create(ctx, suspendedMPIJob(mpi), metav1.CreateOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:      mpiConfig,
				ExpectError: regexp.MustCompile(`(?s)already\s+exists\s+and\s+was\s+not\s+created\s+by\s+this\s+provider.*terraform\s+import\s+<address>\s+default/` + mpi),
			},
			{
				// Labelled as this provider's, but recorded from another request: not adopted.
				PreConfig: func() {
					unchanged()
					patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q},"annotations":{%q:"0123"}}}`, jobs.ManagedByLabel, jobs.ManagedByValue, jobs.RequestHashAnnotation)
					var err error
					foreignJob, err = a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Patch(ctx, mpi, k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:      mpiConfig,
				ExpectError: regexp.MustCompile(`(?s)this\s+provider\s+created\s+it,\s+but\s+from\s+a\s+different\s+configuration.*terraform\s+import\s+<address>\s+default/` + mpi),
			},
			{
				// Somebody else's Service with the name of an elastic job's worker Service: the etcd
				// Service, made first, is removed again when the create fails.
				PreConfig: func() {
					unchanged()
					if err := a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Delete(ctx, mpi, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					var err error
					foreignService, err = a.kube.CoreV1().Services("default").Create(ctx, &corev1.Service{
						ObjectMeta: metav1.ObjectMeta{Name: elastic + "-" + jobs.WorkerRole},
						Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
					}, metav1.CreateOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:      providerConfig() + elasticResource(elastic, 1),
				ExpectError: regexp.MustCompile(`(?s)Service\s+default/` + elastic + `-worker\s+already\s+exists\s+and\s+was\s+not\s+created\s+by\s+this\s+provider`),
			},
		},
		// Nothing of the elastic job is left, and the foreign Service is as it was.
		CheckDestroy: func(*terraform.State) error {
			svc, err := a.kube.CoreV1().Services("default").Get(ctx, foreignService.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("the foreign Service was deleted: %w", err)
			}
			if svc.ResourceVersion != foreignService.ResourceVersion {
				return fmt.Errorf("the foreign Service was changed")
			}
			if err := a.kube.CoreV1().Services("default").Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
				return err
			}
			return checkNothingLeft(a, elastic)(nil)
		},
	})
}

// suspendedMPIJob is a minimal MPIJob as somebody might create it by hand, suspended so that
// it starts no pods.
func suspendedMPIJob(name string) *unstructured.Unstructured {
	container := func(role string) map[string]any {
		return map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": role, "image": "someone/else:1"}}}}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"runPolicy":       map[string]any{"suspend": true},
			"mpiReplicaSpecs": map[string]any{"Launcher": container("launcher"), "Worker": container("worker")},
		},
	}}
}

// A job rescaled by someone else between plan and apply is not overwritten: applying the saved
// plan fails with the count Terraform read and the count found, and the next plan shows the
// difference.
func TestAccChangeBetweenPlanAndApplyIsNotOverwritten(t *testing.T) {
	a := newAPI(t)
	w := newWorkspace(t)
	name := elasticJobName()
	w.write(elasticWorkspaceConfig(providerKubeconfig(), name, 1))
	w.run("apply", "-auto-approve", "-input=false")
	w.write(elasticWorkspaceConfig(providerKubeconfig(), name, 2))
	w.run("plan", "-input=false", "-out=rescale.tfplan")

	// Someone else rescales the job to 3 workers, as the seed's patch does.
	if _, err := a.dyn.Resource(jobs.Elastic.GVR).Namespace("default").Patch(context.Background(), name, k8stypes.JSONPatchType,
		jobs.Elastic.RescalePatch(1, 3), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := w.try(nil, "apply", "-input=false", "rescale.tfplan")
	if err == nil {
		t.Fatalf("applying the stale plan succeeded:\n%s", out)
	}
	if want := regexp.MustCompile(`(?s)someone\s+else\s+changed\s+its\s+worker\s+count\s+to\s+3\s+after\s+Terraform\s+read\s+it\s+as\s+1`); !want.MatchString(out) {
		t.Errorf("the error does not say what changed:\n%s", out)
	}
	fw, err := a.get(jobs.Elastic.GVR, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	if workers, _ := jobs.Elastic.Workers(fw); workers != 3 {
		t.Errorf("the other change was overwritten: %d workers, want 3", workers)
	}
	plan, err := w.try(nil, "plan", "-input=false")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, plan)
	}
	if !regexp.MustCompile(`worker_count\s+=\s+3\s+->\s+2`).MatchString(plan) {
		t.Errorf("the next plan does not show the change:\n%s", plan)
	}
	w.run("destroy", "-auto-approve", "-input=false")
	if err := checkNothingLeft(a, name)(nil); err != nil {
		t.Error(err)
	}
}

// A job deleted and made again outside Terraform under the same name is not taken for the
// resource's own: refresh drops the resource with a warning, the apply that would create it again
// refuses the foreign object, and destroy leaves it alone.
func TestAccJobReplacedOutsideIsNeitherChangedNorDeleted(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	name := mpiJobName()
	config := providerConfig() + mpiJobBlock("test", name, `  wait_for     = "created"`+"\n")
	var foreign *unstructured.Unstructured
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: resource.TestCheckResourceAttrSet("training_mpi_job.test", "uid")},
			{
				PreConfig: func() {
					mpiJobs := a.dyn.Resource(jobs.MPI.GVR).Namespace("default")
					if err := mpiJobs.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
						t.Fatal(err)
					}
					if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
						_, err := mpiJobs.Get(ctx, name, metav1.GetOptions{})
						return apierrors.IsNotFound(err), nil
					}); err != nil {
						t.Fatal(err)
					}
					var err error
					if foreign, err = mpiJobs.Create(ctx, suspendedMPIJob(name), metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)already\s+exists\s+and\s+was\s+not\s+created\s+by\s+this\s+provider`),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			now, err := a.get(jobs.MPI.GVR, "default", name)
			if err != nil {
				return fmt.Errorf("the job made outside Terraform was deleted: %w", err)
			}
			if now.GetUID() != foreign.GetUID() || now.GetGeneration() != foreign.GetGeneration() {
				return fmt.Errorf("the job made outside Terraform was changed or replaced")
			}
			return a.dyn.Resource(jobs.MPI.GVR).Namespace("default").Delete(ctx, name, metav1.DeleteOptions{})
		},
	})
}
