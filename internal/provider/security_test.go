package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// Every provider setting that can hold a secret is sensitive, so Terraform never shows it in
// plans or output.
func TestProviderCredentialsAreSensitive(t *testing.T) {
	var resp provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &resp)
	for _, name := range []string{"token", "password", "client_key"} {
		if !resp.Schema.Attributes[name].IsSensitive() {
			t.Errorf("provider attribute %q is not sensitive", name)
		}
	}
	exec := resp.Schema.Blocks["exec"].GetNestedObject().GetAttributes()
	if !exec["env"].IsSensitive() {
		t.Error(`provider attribute exec.env is not sensitive`)
	}
}

// The suite's provider acts as a ServiceAccount bound to exactly the shipped roles. Take one
// permission away and the operation that needs it fails at once with the API server's 403,
// which names the verb and the resource; nothing half made is left.
func TestAccMissingPermissionIsReportedWithVerbAndResource(t *testing.T) {
	a := newAPI(t)
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	noCreate, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-no-create-frameworks", withoutVerb(roles, "create", "frameworks"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	noDelete, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-no-delete-mpijobs", withoutVerb(roles, "delete", "mpijobs"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	elastic, mpi := elasticJobName(), mpiJobName()
	provider := func(kubeconfig string) string {
		return fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig)
	}
	mpiJob := mpiJobBlock("test", mpi, `  wait_for     = "created"`+"\n")
	elasticJob := fmt.Sprintf(`
resource "training_elastic_job" "test" {
  name         = %q
  image        = "torchelastic/examples:0.2.0"
  script       = "/workspace/train.py"
  worker_count = 1
  elastic  = { min_workers = 1, max_workers = 2 }
}
`, elastic)
	nothingOfElastic := func() {
		for _, name := range []string{elastic, elastic + "-" + jobs.EtcdRole, elastic + "-" + jobs.WorkerRole} {
			if _, err := a.kube.CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{}); err == nil {
				t.Errorf("Service %s is left although the Framework could not be created", name)
			}
		}
		if _, err := a.get(jobs.Elastic.GVR, "default", elastic); err == nil {
			t.Errorf("Framework %s exists", elastic)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, mpi),
		Steps: []resource.TestStep{
			{
				Config:      provider(noCreate) + elasticJob,
				ExpectError: regexp.MustCompile(`(?s)User\s+"system:serviceaccount:kube-system:terraform-no-create-frameworks"\s+cannot\s+create\s+resource\s+"frameworks"\s+in\s+API\s+group\s+"frameworkcontroller.microsoft.com"`),
			},
			{PreConfig: nothingOfElastic, Config: provider(noDelete) + mpiJob},
			{
				Config:      provider(noDelete) + mpiJob,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)cannot\s+delete\s+resource\s+"mpijobs"\s+in\s+API\s+group\s+"kubeflow.org"`),
			},
			{
				// The job is still there and in state; with the shipped roles it is destroyed.
				PreConfig: func() {
					if _, err := a.get(jobs.MPI.GVR, "default", mpi); err != nil {
						t.Errorf("the MPI job is gone although its delete was forbidden: %v", err)
					}
				},
				Config: providerConfig() + mpiJob,
			},
		},
	})
}

// TLS is verified unless insecure is set: the local API server's certificate is signed by the
// cluster's own CA, which the provider is not given here.
func TestAccTLSVerification(t *testing.T) {
	newAPI(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", providerKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	config := func(insecure bool) string {
		return fmt.Sprintf(`
provider "training" {
  host     = %q
  token    = %q
  insecure = %t
}

data "training_nodes" "all" {}
`, cfg.Host, cfg.BearerToken, insecure)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(false), ExpectError: regexp.MustCompile(`x509: certificate signed by unknown authority`)},
			{Config: config(true), ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.training_nodes.all", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(6)),
			}},
		},
	})
}

// The provider's credentials never reach Terraform's logs, even at TRACE, where the provider
// logs every API call it makes.
func TestAccCredentialsNeverLogged(t *testing.T) {
	a := newAPI(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", providerKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(cfg.CAFile)
	if len(cfg.CAData) > 0 {
		ca, err = cfg.CAData, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	// A second provider configuration authenticates with a client certificate and key: the
	// admin's, read by the nodes data source.
	admin, err := clientcmd.BuildConfigFromFlags("", clustertest.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	clientCert, certErr := os.ReadFile(admin.CertFile)
	clientKey, keyErr := os.ReadFile(admin.KeyFile)
	if len(admin.CertData) > 0 {
		clientCert, clientKey, certErr, keyErr = admin.CertData, admin.KeyData, nil, nil
	}
	if certErr != nil || keyErr != nil {
		t.Fatal(certErr, keyErr)
	}
	name := mpiJobName()
	w := newWorkspace(t)
	w.write(fmt.Sprintf(`
provider "training" {
  host                   = %[1]q
  token                  = %[2]q
  cluster_ca_certificate = %[3]q
}

provider "training" {
  alias                  = "certificate"
  host                   = %[1]q
  client_certificate     = %[4]q
  client_key             = %[5]q
  cluster_ca_certificate = %[3]q
}

data "training_nodes" "all" {
  provider = training.certificate
}
`, cfg.Host, cfg.BearerToken, string(ca), string(clientCert), string(clientKey)) + mpiJobBlock("test", name, `  tolerations  = ["all"]`+"\n"))
	trace := []string{"TF_LOG=TRACE"}
	var logs strings.Builder
	for _, args := range [][]string{{"apply", "-auto-approve", "-input=false"}, {"plan", "-input=false"}, {"destroy", "-auto-approve", "-input=false"}} {
		out, err := w.try(trace, args...)
		if err != nil {
			t.Fatalf("terraform %v: %v\n%s", args, err, out)
		}
		logs.WriteString(out)
	}
	if err := checkNothingLeft(a, name)(nil); err != nil {
		t.Error(err)
	}
	out := logs.String()
	// The logs are TRACE logs of this provider's work, so a leak would show in them.
	for _, want := range []string{"[TRACE]", "CREATE MPIJob default/" + name, "DELETE MPIJob default/" + name, "LIST nodes"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the TRACE output lacks %q: it is not the log the test means to check", want)
		}
	}
	token := cfg.BearerToken
	for _, secret := range []string{token, token[len(token)-24:], base64.StdEncoding.EncodeToString([]byte(token))} {
		if strings.Contains(out, secret) {
			t.Errorf("the token (or part of it) appears in the TRACE output (%d bytes)", len(out))
			break
		}
	}
	// The key's PEM body, line by line: any line of it in the logs is a leak.
	for _, line := range strings.Split(string(clientKey), "\n") {
		if len(line) >= 32 && strings.Contains(out, line) {
			t.Errorf("a line of the client key appears in the TRACE output")
			break
		}
	}
	if !t.Failed() {
		t.Logf("TRACE output checked: %d bytes, %d lines, no credential", len(out), strings.Count(out, "\n"))
	}
}

// A provider setting that is unknown at plan (here config_path, from a resource the same apply
// makes) is never replaced by the KUBE_* environment, which may name another cluster: the
// refresh leaves the job's state as it was (with a warning), so the plan neither fails nor
// plans to create the job again; the apply, with the setting known, reaches the right cluster.
func TestAccProvider_unknownSettingsNeverFallBackToTheEnvironment(t *testing.T) {
	newAPI(t)
	name := mpiJobName()
	// Nothing listens where this kubeconfig points: a refresh that fell back to it would fail.
	t.Setenv("KUBE_CONFIG_PATH", unreachableKubeconfig(t))
	job := fmt.Sprintf(`
resource "training_mpi_job" "test" {
  name         = %q
  image        = "registry.example/horovod:0.13.11"
  command      = ["mpirun", "python", "train.py"]
  worker_count = 1
  tolerations  = ["ssd_node"]
  wait_for     = "created"
}
`, name)
	unknownPath := fmt.Sprintf(`
resource "terraform_data" "kubeconfig" {
  input = %q
}

provider "training" {
  config_path = terraform_data.kubeconfig.output
}
`, providerKubeconfig()) + job
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: providerConfig() + job},
			{
				Config: unknownPath,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("training_mpi_job.test", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("terraform_data.kubeconfig", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
}

// Environment from a Secret never passes through Terraform: the Secret's value is in neither
// the plan output, the state, nor a TRACE log of apply, plan and destroy, while the job's pod
// template names the Secret and key. A sensitive_env value is hidden from plans and logs, and
// stays sensitive through an import, which is exact.
func TestAccSecretEnvNeverPassesThroughTerraform(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	name := mpiJobName()
	secretValue := "secret-" + acctest.RandString(24)
	inlineValue := "inline-" + acctest.RandString(24)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-keys", Namespace: "default"},
		StringData: map[string]string{"api-key": secretValue}}
	if _, err := a.kube.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.kube.CoreV1().Secrets("default").Delete(ctx, secret.Name, metav1.DeleteOptions{}) })
	w := newWorkspace(t)
	w.write(providerConfig() + mpiJobBlock("test", name, fmt.Sprintf(`  wait_for         = "created"
  env_secret       = { API_KEY = { secret = %[1]q, key = "api-key" } }
  env_from_secrets = [%[1]q]
  sensitive_env    = { TOKEN = %[2]q }
`, secret.Name, inlineValue)))
	trace := []string{"TF_LOG=TRACE"}
	var logs strings.Builder
	for _, args := range [][]string{{"apply", "-auto-approve", "-input=false"}, {"plan", "-input=false"}} {
		out, err := w.try(trace, args...)
		if err != nil {
			t.Fatalf("terraform %v: %v\n%s", args, err, out)
		}
		logs.WriteString(out)
	}
	state, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	job, err := a.get(jobs.MPI.GVR, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	// Imported, the value given as sensitive stays so: the import is exact (the plan after it is
	// empty, nothing replaced), and neither the import, the plan nor the configuration Terraform
	// generates for the job shows it.
	imported := newWorkspace(t)
	// wait_for is Terraform's alone and reads as its default after an import.
	imported.write(providerConfig() + mpiJobBlock("test", name, fmt.Sprintf(`  env_secret       = { API_KEY = { secret = %[1]q, key = "api-key" } }
  env_from_secrets = [%[1]q]
  sensitive_env    = { TOKEN = %[2]q }
`, secret.Name, inlineValue)))
	logs.WriteString(imported.run("import", "-input=false", "training_mpi_job.test", "default/"+name))
	out, err := imported.try(nil, "plan", "-detailed-exitcode", "-input=false")
	if err != nil {
		t.Errorf("the plan after importing the job is not empty (%v):\n%s", err, out)
	}
	logs.WriteString(out)
	generated := newWorkspace(t)
	generated.write(providerConfig() + fmt.Sprintf("import {\n  to = training_mpi_job.test\n  id = \"default/%s\"\n}\n", name))
	logs.WriteString(generated.run("plan", "-input=false", "-generate-config-out=generated.tf"))
	config, err := os.ReadFile(filepath.Join(generated.dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(config), inlineValue) || !strings.Contains(string(config), "sensitive_env") {
		t.Errorf("the configuration generated for the imported job shows the sensitive value, or no sensitive_env:\n%s", config)
	}
	out, err = w.try(trace, "destroy", "-auto-approve", "-input=false")
	if err != nil {
		t.Fatalf("terraform destroy: %v\n%s", err, out)
	}
	logs.WriteString(out)

	if !strings.Contains(logs.String(), "[TRACE]") || !strings.Contains(logs.String(), "CREATE MPIJob default/"+name) {
		t.Fatal("the output is not the TRACE log of this provider's work the test means to check")
	}
	if strings.Contains(logs.String(), secretValue) || strings.Contains(string(state), secretValue) {
		t.Error("the Secret's value passed through Terraform (it is in the TRACE log or the state)")
	}
	if strings.Contains(logs.String(), inlineValue) {
		t.Error("the sensitive_env value appears in the output of a plan, an import or the TRACE log")
	}
	// What the pods get: a reference to the Secret, and the Secret as a whole.
	containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers")
	if len(containers) == 0 {
		t.Fatal("the MPIJob has no worker container")
	}
	c, _ := containers[0].(map[string]any)
	env, _ := json.Marshal(c["env"])
	envFrom, _ := json.Marshal(c["envFrom"])
	if !strings.Contains(string(env), `{"name":"API_KEY","valueFrom":{"secretKeyRef":{"key":"api-key","name":"`+secret.Name+`"}}}`) {
		t.Errorf("the worker's env has no secretKeyRef for API_KEY: %s", env)
	}
	if !strings.Contains(string(envFrom), `"secretRef":{"name":"`+secret.Name+`"}`) {
		t.Errorf("the worker's envFrom does not name the Secret: %s", envFrom)
	}
}
