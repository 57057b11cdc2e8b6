package provider

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// localRegistry serves realnode.LocalRegistry to the real node for one test: a registry (in
// memory) that holds no image, so that it answers a pull of any tag as a registry answers for a
// tag that does not exist (404, manifest unknown), or, while failing is set, with that status
// for every manifest, as a registry that limits pulls or is down does.
type localRegistry struct{ failing atomic.Int32 }

func serveLocalRegistry(t *testing.T) *localRegistry {
	t.Helper()
	r := &localRegistry{}
	images := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	serveOnLocalRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if status := int(r.failing.Load()); status != 0 && strings.Contains(req.URL.Path, "/manifests/") {
			http.Error(w, http.StatusText(status), status)
			return
		}
		images.ServeHTTP(w, req)
	}))
	return r
}

// localRegistryInUse is held by the test that serves realnode.LocalRegistryAddress, from its
// start to its end: the real node's tests run in parallel, the address is one.
var localRegistryInUse sync.Mutex

// serveOnLocalRegistry serves h as realnode.LocalRegistry until the test ends.
func serveOnLocalRegistry(t *testing.T, h http.Handler) {
	t.Helper()
	localRegistryInUse.Lock()
	t.Cleanup(localRegistryInUse.Unlock)
	ln, err := net.Listen("tcp", realnode.LocalRegistryAddress)
	if err != nil {
		t.Fatalf("serving the real node's registry: %v", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// TestAccRealNode_createFailsFastOnlyOnWhatCannotPass: what cannot pass by itself ends the create
// with the pod, the container and the kubelet's reason, long before the create timeout (which
// would only warn): a tag the registry does not have, a command that does not exist, a program
// that fails on its first line (with its exit code and its last lines). The failed job is in
// state, tainted, and the next apply replaces it. What may pass, a registry answering 503, is
// waited on: the create runs out its timeout with a warning that says so, and the job stays in
// state untainted (the next plan is empty).
func TestAccRealNode_createFailsFastOnlyOnWhatCannotPass(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	reg := serveLocalRegistry(t)
	name := acctest.RandomWithPrefix("tfacc-ff")
	image := node.Images[images.Training]
	config := func(image, extra, timeout string) string {
		return providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["mpirun", "python3", "%[3]s/mpi_allreduce.py"]
  worker_count = 1
%[4]s
%[5]s
  timeouts {
    create = %[6]q
  }
}
`, name, image, images.ProgramsDir, onRealNode, extra, timeout)
	}
	missing := realnode.LocalRegistry + "/training:no-such-tag"
	ran := knownvalue.StringRegexp(regexp.MustCompile("^(" + jobs.Running + "|" + jobs.Succeeded + ")$"))
	tainted := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionReplace)}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{
			{
				// The registry limits pulls: the kubelet keeps trying, and the wait with it.
				PreConfig: func() { reg.failing.Store(http.StatusServiceUnavailable) },
				Config:    config(realnode.LocalRegistry+"/training:limited", "", "75s"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Pending))},
			},
			{
				// The same job, once the registry answers again: the tag does not exist.
				PreConfig: func() { reg.failing.Store(0) },
				Config:    config(missing, "", "4m"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionReplace)}},
				ExpectError: regexp.MustCompile(`pod\s+` + name + `-\S+:\s+container\s+\S+:\s+(ImagePullBackOff|ErrImagePull):[\s\S]*no-such-tag:\s+not\s+found`),
			},
			{Config: config(image, `  worker_command = ["no-such-program"]`, "4m"), ConfigPlanChecks: tainted,
				ExpectError: regexp.MustCompile(`container\s+worker:\s+(StartError|RunContainerError):[\s\S]*no-such-program`)},
			{Config: strings.Replace(config(image, "", "4m"), `["mpirun", "python3", "`+images.ProgramsDir+`/mpi_allreduce.py"]`,
				`["python3", "-c", "import sys; print('train.py: error: unrecognized arguments: --lr'); sys.exit(3)"]`, 1), ConfigPlanChecks: tainted,
				ExpectError: regexp.MustCompile(`container\s+launcher:\s+CrashLoopBackOff:\s+exited\s+with\s+code\s+3[\s\S]*unrecognized\s+arguments:\s+--lr`)},
			{Config: config(image, "", "4m"), ConfigPlanChecks: tainted, ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"), ran)}},
		},
	})
}

// TestAccRealNode_aSecretMadeAMomentLaterIsWaitedFor: a job whose environment names a Secret that
// is not there yet (another resource of the same apply, or a controller, makes it a little later,
// with nothing telling Terraform to wait) is not failed: the kubelet retries, the job runs, the
// apply succeeds, and the next plan is empty.
func TestAccRealNode_aSecretMadeAMomentLaterIsWaitedFor(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-late")
	secret := name + "-token"
	config := providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["mpirun", "python3", "%[3]s/mpi_allreduce.py"]
  worker_count = 1
  env_secret   = { TOKEN = { secret = %[5]q, key = "token" } }
%[4]s
}
`, name, node.Images[images.Training], images.ProgramsDir, onRealNode, secret)
	aSecretMadeAMomentLater(t, a, config, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: "default"},
		StringData: map[string]string{"token": "t"}}, nil)
}

// aSecretMadeAMomentLater applies config, whose job names secret before it exists: the Secret
// appears 20 seconds into the apply (what another resource of the same apply, or a controller,
// does with nothing telling Terraform to wait), once the job's pods have met its absence. The
// apply succeeds with the job running (and check, if any, holds) and the next plan is empty.
func aSecretMadeAMomentLater(t *testing.T, a *api, config string, secret *corev1.Secret, check resource.TestCheckFunc) {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() { _ = a.kube.CoreV1().Secrets(secret.Namespace).Delete(ctx, secret.Name, metav1.DeleteOptions{}) })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkJobsGone(a),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				go func() {
					time.Sleep(20 * time.Second)
					if _, err := a.kube.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
						t.Errorf("making the Secret: %v", err)
					}
				}()
			},
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"),
				knownvalue.StringRegexp(regexp.MustCompile("^("+jobs.Running+"|"+jobs.Succeeded+")$")))},
			Check: check,
		}, {
			Config:           config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		}},
	})
}
