package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
)

// runtimeData is what training_runtime says, as `terraform output -json` gives it.
type runtimeData struct {
	Kind            string            `json:"kind"`
	Framework       string            `json:"framework"`
	NumNodes        int               `json:"num_nodes"`
	Managed         bool              `json:"managed"`
	Requests        map[string]string `json:"requests"`
	TrainerImage    string            `json:"trainer_image"`
	TrainerEnvNames []string          `json:"trainer_env_names"`
	Grace           *int              `json:"termination_grace_period_seconds"`
	Jobs            []runtimeJobData  `json:"replicated_jobs"`
}

type runtimeJobData struct {
	Name        string            `json:"name"`
	Trainer     bool              `json:"trainer"`
	DependsOn   []string          `json:"depends_on"`
	Pods        int               `json:"pods"`
	PodRequests map[string]string `json:"pod_requests"`
	Tolerations []string          `json:"tolerations"`
}

// A team reads a runtime it does not own with the jobs' and cluster reads' roles: a namespaced MPI
// runtime made by a training_runtime, for a job of 3 nodes, runs 3 node pods and a launcher that
// waits for them and takes the trainer's settings; what Kueue counts for the job is every pod's
// requests; the variables are read by name, a sensitive value never reaches the state. One of
// Trainer's own ClusterTrainingRuntimes reads as not managed, for the node count it says. A
// runtime that is not there fails, saying where to look.
func TestAccRuntimeDataSource_readsWhatATrainJobGets(t *testing.T) {
	newAPI(t) // the cluster, or a skip outside the acceptance lanes
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	readers := slices.DeleteFunc(slices.Clone(roles), func(r rbacv1.ClusterRole) bool {
		return r.Name != jobsRole && r.Name != "terraform-provider-training-cluster-reads"
	})
	kubeconfig, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-runtime-reader", readers, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	name := acctest.RandomWithPrefix("tf-acc-rtdata")
	const secret = "rt-data-secret-4f1c"
	owner := newWorkspace(t)
	owner.write(providerConfig() + fmt.Sprintf(`
resource "training_runtime" "mpi" {
  name          = %q
  namespace     = "default"
  framework     = "mpi"
  image         = "mpioperator/mpi-pi:openmpi"
  command       = ["mpirun", "python3", "/train.py"]
  gpus          = 1
  tolerations   = ["gpu_node"]
  env           = { EPOCHS = "3" }
  sensitive_env = { HF_TOKEN = %q }
  mpi           = {}
}
`, name, secret))
	owner.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { owner.run("destroy", "-auto-approve", "-input=false") })

	w := newWorkspace(t)
	w.write(fmt.Sprintf(`provider "training" {
  config_path = %q
}

data "training_runtime" "mine" {
  name      = %q
  namespace = "default"
  num_nodes = 3
}

data "training_runtime" "trainers" {
  name = "deepspeed-distributed"
}

output "mine" {
  value = data.training_runtime.mine
}

output "trainers" {
  value = data.training_runtime.trainers
}
`, kubeconfig, name))
	w.run("apply", "-auto-approve", "-input=false")
	read := func(output string) runtimeData {
		t.Helper()
		var d runtimeData
		if err := json.Unmarshal([]byte(w.run("output", "-json", output)), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	mine := read("mine")
	if mine.Kind != "TrainingRuntime" || mine.Framework != "mpi" || !mine.Managed || mine.NumNodes != 3 || mine.TrainerImage != "mpioperator/mpi-pi:openmpi" {
		t.Errorf("the runtime reads %+v", mine)
	}
	if len(mine.Jobs) != 2 {
		t.Fatalf("replicated jobs %+v, want node and launcher", mine.Jobs)
	}
	node, launcher := mine.Jobs[0], mine.Jobs[1]
	if node.Name != "node" || node.Pods != 3 || node.Trainer || node.PodRequests["nvidia.com/gpu"] != "1" || !slices.Contains(node.Tolerations, "gpu_node") {
		t.Errorf("node job %+v, want 3 pods of 1 GPU each tolerating gpu_node", node)
	}
	if launcher.Name != "launcher" || launcher.Pods != 1 || !launcher.Trainer || !slices.Equal(launcher.DependsOn, []string{"node Ready"}) {
		t.Errorf("launcher job %+v, want 1 pod, the trainer's, after the nodes are ready", launcher)
	}
	gpus := resource.Quantity{}
	for _, j := range mine.Jobs {
		if q, ok := j.PodRequests["nvidia.com/gpu"]; ok {
			for range j.Pods {
				gpus.Add(resource.MustParse(q))
			}
		}
	}
	if mine.Requests["nvidia.com/gpu"] != gpus.String() {
		t.Errorf("the job's GPU requests read %q, want %s, its pods' sum", mine.Requests["nvidia.com/gpu"], gpus.String())
	}
	if !slices.Contains(mine.TrainerEnvNames, "HF_TOKEN") || !slices.Contains(mine.TrainerEnvNames, "EPOCHS") {
		t.Errorf("trainer env names %v", mine.TrainerEnvNames)
	}
	state, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(state), secret) {
		t.Error("the reader's state holds the runtime's sensitive value")
	}

	trainers := read("trainers")
	if trainers.Kind != "ClusterTrainingRuntime" || trainers.Managed || trainers.Framework != "mpi" || trainers.NumNodes < 1 ||
		!slices.ContainsFunc(trainers.Jobs, func(j runtimeJobData) bool { return j.Trainer }) {
		t.Errorf("Trainer's deepspeed-distributed reads %+v", trainers)
	}

	w.write(fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n\ndata \"training_runtime\" \"gone\" {\n  name = %q\n}\n", kubeconfig, name))
	out, err := w.try(nil, "plan", "-input=false")
	if err == nil || !strings.Contains(flat(out), "Set namespace to read a TrainingRuntime") {
		t.Errorf("a runtime looked for where it is not does not fail saying where to look (%v):\n%s", err, out)
	}
}
