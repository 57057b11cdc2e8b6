package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// identityProgram waits for the sidecar's heartbeat, then prints who it runs as, what the
// init container left and its write-only variable, as one JSON line.
const identityProgram = `import json, os, time
deadline = time.time() + 60
while not os.path.exists("/shared/heartbeat") and time.time() < deadline:
    time.sleep(0.5)
print(json.dumps({"event": "identity", "uid": os.getuid(), "gid": os.getgid(), "groups": sorted(os.getgroups()),
    "fetched": open("/shared/fetched").read().strip(), "heartbeat": os.path.exists("/shared/heartbeat"),
    "write_only": os.environ.get("WRITE_ONLY_PROBE", "")}), flush=True)
time.sleep(5)
`

// TestAccRealNode_aJobWithAnInitContainerAndASidecarRunsAsTheNonRootUserItWasGiven: a TFJob
// whose worker has, by pod_patch, an init container that leaves a file in a shared emptyDir and
// a native sidecar that keeps a heartbeat there, and the security context Pod Security
// "restricted" asks for, with user 1000: on the real node the program sees the init
// container's file and the sidecar's heartbeat, runs as uid 1000 with gid 1000 and fsGroup 2000
// among its groups, sees its write-only variable (taken from the job's Secret), and the job
// succeeds (the kubelet stops the sidecar when the program ends).
func TestAccRealNode_aJobWithAnInitContainerAndASidecarRunsAsTheNonRootUserItWasGiven(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-side")
	image := node.Images[images.Training]
	config := providerConfig() + fmt.Sprintf(`
resource "training_tf_job" "test" {
  name         = %[1]q
  image        = %[2]q
  command      = ["python3", "-c", %[3]q]
  worker_count = 1
%[4]s
  sensitive_env_wo         = { WRITE_ONLY_PROBE = "seen-by-the-program" }
  sensitive_env_wo_version = 1
  security_context = {
    run_as_non_root            = true
    run_as_user                = 1000
    run_as_group               = 1000
    fs_group                   = 2000
    seccomp_profile            = "RuntimeDefault"
    allow_privilege_escalation = false
    drop_capabilities          = ["ALL"]
  }
  pod_patch = {
    worker = yamlencode({
      spec = {
        volumes = [{ name = "shared", emptyDir = {} }]
        initContainers = [
          { name = "fetch", image = %[2]q, command = ["sh", "-c", "echo fetched-by-init > /shared/fetched"],
            volumeMounts = [{ name = "shared", mountPath = "/shared" }] },
          { name = "heartbeat", image = %[2]q, restartPolicy = "Always",
            command = ["sh", "-c", "while true; do date +%%s > /shared/heartbeat; sleep 1; done"],
            volumeMounts = [{ name = "shared", mountPath = "/shared" }] },
        ]
        containers = [{ name = "tensorflow", volumeMounts = [{ name = "shared", mountPath = "/shared" }] }]
      }
    })
  }
}
`, name, image, identityProgram, onRealNode)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(a, jobs.TF, name),
		Steps: []resource.TestStep{
			{Config: config, Check: func(*terraform.State) error {
				events := a.waitEvents(t, jobs.TF.PodSelector(name), 3*time.Minute, "the program's identity", func(events []event) bool {
					return len(events) == 1
				})
				e := events[0]
				hasGroup := false
				for _, g := range e.Groups {
					hasGroup = hasGroup || g == 2000
				}
				if e.UID != 1000 || e.GID != 1000 || !hasGroup || e.Fetched != "fetched-by-init" || !e.Heartbeat || e.WriteOnly != "seen-by-the-program" {
					return fmt.Errorf("the program ran as uid %d gid %d groups %v, saw %q from the init container, heartbeat %v and write-only variable %q; "+
						"want 1000, 1000, 2000 among them, fetched-by-init, true, seen-by-the-program", e.UID, e.GID, e.Groups, e.Fetched, e.Heartbeat, e.WriteOnly)
				}
				return nil
			}},
			a.succeeded(t, jobs.TF, name, "training_tf_job.test"),
		},
	})
}
