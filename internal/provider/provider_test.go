package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts"
)

// testProviderFactories serve the provider as the released binary does (shortcuts.New), with
// each answer of its shortcuts checked against the framework's (shortcuts.Checked); a
// difference fails the test binary (failOnShortcutMismatches). With shortcuts.Env=off the
// framework serves alone, as the binary does then. Either way the questions asked are recorded
// (recording, for the CLI lanes).
var testProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"training": func() (tfprotov6.ProviderServer, error) { return testServer(), nil },
}

func testServer() tfprotov6.ProviderServer {
	if os.Getenv(shortcuts.Env) == "off" {
		return recording{shortcuts.New(New("test")())}
	}
	return recording{shortcuts.Checked(New("test")(), func(_ context.Context, difference string) { mismatch(difference) })}
}

var shortcutMismatches struct {
	sync.Mutex
	found []string
}

func mismatch(difference string) {
	shortcutMismatches.Lock()
	defer shortcutMismatches.Unlock()
	shortcutMismatches.found = append(shortcutMismatches.found, difference)
}

// failOnShortcutMismatches is the test binary's exit code once the differences found are
// reported: 1 if there were any.
func failOnShortcutMismatches(code int) int {
	shortcutMismatches.Lock()
	defer shortcutMismatches.Unlock()
	for _, m := range shortcutMismatches.found {
		fmt.Fprintln(os.Stderr, "a shortcut answered otherwise than the framework:", m)
	}
	if len(shortcutMismatches.found) > 0 {
		return 1
	}
	return code
}

// TestMain gives the acceptance tests (TF_ACC=1) one local cluster for the whole binary, or the
// cluster named by TRAINING_TEST_KUBECONFIG.
func TestMain(m *testing.M) {
	// The environment may name a CLI config file that does not exist; terraform then fails.
	// Unit tests that run terraform (resource.UnitTest) need it as much as acceptance tests.
	dir, err := os.MkdirTemp("", "tf-acc-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cliConfig := filepath.Join(dir, "terraformrc")
	if err := os.WriteFile(cliConfig, nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Setenv("TF_CLI_CONFIG_FILE", cliConfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := failOnUnaskedCLIQuestions(failOnShortcutMismatches(run(m)))
	_ = os.RemoveAll(dir)
	for _, d := range []string{providerBinary.dir, leastPrivilegeDir} {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// run runs the tests: without TF_ACC, the unit tests alone; with it, the acceptance tests too,
// on one local cluster for the whole binary or the cluster named by TRAINING_TEST_KUBECONFIG.
func run(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run()
	}
	// TF_ACC_TERRAFORM_PATH names another CLI (OpenTofu); otherwise terraform must be on PATH.
	if path := os.Getenv("TF_ACC_TERRAFORM_PATH"); path != "" {
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintln(os.Stderr, "TF_ACC_TERRAFORM_PATH:", err)
			return 1
		}
	} else if _, err := exec.LookPath("terraform"); err != nil {
		fmt.Fprintln(os.Stderr, "acceptance tests need the terraform CLI on PATH; none was found (they never download one)")
		return 1
	}
	return clustertest.Run(m, setUpLeastPrivilege)
}

func providerConfig() string {
	return fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", providerKubeconfig())
}

// providerKubeconfig is the kubeconfig the provider under test acts with: a ServiceAccount
// bound to exactly the least-privilege roles the docs ship (examples/rbac). The tests' own
// checks use the cluster's admin kubeconfig.
func providerKubeconfig() string { return leastPrivilegeKubeconfig }

// api gives tests direct access to the cluster, to check what the provider did there.
type api struct {
	t    *testing.T
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func newAPI(t *testing.T) *api {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", clustertest.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return &api{t: t, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
}

func (a *api) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return a.dyn.Resource(gvr).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

func (a *api) pods(namespace, selector string) []corev1.Pod {
	a.t.Helper()
	list, err := a.kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		a.t.Fatal(err)
	}
	return list.Items
}

// waitPods waits until the pods in the test namespace matching selector satisfy ok; it returns
// the error for a check.
func (a *api) waitPods(selector string, ok func([]corev1.Pod) bool) error {
	const namespace = "default"
	var last []corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := a.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		last = list.Items
		return ok(last), nil
	})
	if err != nil {
		var states []string
		for _, p := range last {
			states = append(states, fmt.Sprintf("%s=%s@%s", p.Name, p.Status.Phase, p.Spec.NodeName))
		}
		return fmt.Errorf("pods %q: %w (last seen %v)", selector, err, states)
	}
	return nil
}

// finishPods makes KWOK end the matching pods of the default namespace as succeeded, as their
// processes would.
func (a *api) finishPods(selector string) {
	a.t.Helper()
	const namespace = "default"
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, cluster.SimulateExitAnnotation, corev1.PodSucceeded)
	for _, p := range a.pods(namespace, selector) {
		if _, err := a.kube.CoreV1().Pods(namespace).Patch(context.Background(), p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			a.t.Fatal(err)
		}
	}
}

func TestProviderSchemaIsValid(t *testing.T) {
	// Building the provider server validates every schema; a bad default or plan modifier fails here.
	server, err := testProviderFactories["training"]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	if _, ok := resp.ResourceSchemas["training_mpi_job"]; !ok {
		t.Error("training_mpi_job is not served")
	}
}
