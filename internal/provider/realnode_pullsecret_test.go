package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
	"github.com/kubetrain/terraform-provider-training/cluster/realnode"
)

// servePrivateRegistry serves realnode.LocalRegistry as a private registry: to a client that
// gives user and password, its repository "training" has one tag, the real node's training image
// (pushed as its manifest alone, since containerd holds every blob it names); anyone else is
// refused with 401, as a registry refuses an anonymous pull. It returns the count of refusals.
func servePrivateRegistry(t *testing.T, trainingImage, tag, user, password string) *atomic.Int32 {
	t.Helper()
	mediaType, manifest, err := realnode.ImageManifest(context.Background(), trainingImage)
	if err != nil {
		t.Fatal(err)
	}
	images := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	push := httptest.NewRequest(http.MethodPut, "/v2/training/manifests/"+tag, bytes.NewReader(manifest))
	push.Header.Set("Content-Type", mediaType)
	pushed := httptest.NewRecorder()
	if images.ServeHTTP(pushed, push); pushed.Code != http.StatusCreated {
		t.Fatalf("pushing the training image's manifest: %d %s", pushed.Code, pushed.Body)
	}
	refused := &atomic.Int32{}
	serveOnLocalRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != user || p != password {
			refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="kubetrain"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		images.ServeHTTP(w, req)
	}))
	return refused
}

// TestAccRealNode_aPullSecretMadeAMomentLaterIsWaitedFor: a job whose image is in a private
// registry and whose pull Secret is not there yet (another resource of the same apply, or a
// controller, makes it 20 seconds later) is not failed: the registry refuses the kubelet's
// anonymous pulls, the kubelet retries, and once the Secret exists the pull succeeds, the job
// runs, the apply succeeds, and the next plan is empty.
func TestAccRealNode_aPullSecretMadeAMomentLaterIsWaitedFor(t *testing.T) {
	node := realNode(t)
	a := newAPI(t)
	t.Parallel()
	name := acctest.RandomWithPrefix("tfacc-pull")
	secret, user, password := name+"-registry", "trainer", acctest.RandString(16)
	// A tag of this run alone: the node has not pulled it, so the kubelet must.
	tag := name
	refused := servePrivateRegistry(t, node.Images[images.Training], tag, user, password)
	config := providerConfig() + fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name               = %[1]q
  image              = "%[2]s/training:%[3]s"
  command            = ["mpirun", "python3", "%[4]s/mpi_allreduce.py"]
  worker_count       = 1
  image_pull_secrets = [%[5]q]
%[6]s
}
`, name, realnode.LocalRegistry, tag, images.ProgramsDir, secret, onRealNode)
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	dockerConfig, err := json.Marshal(map[string]any{"auths": map[string]any{realnode.LocalRegistry: map[string]string{
		"username": user, "password": password, "auth": auth}}})
	if err != nil {
		t.Fatal(err)
	}
	aSecretMadeAMomentLater(t, a, config, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: "default"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: dockerConfig}},
		func(*terraform.State) error {
			if refused.Load() == 0 {
				return fmt.Errorf("the registry refused no pull: the job did not meet the Secret's absence")
			}
			return nil
		})
}
