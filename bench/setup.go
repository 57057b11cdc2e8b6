package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// buildProviders builds the three measured providers and places the RSS wrapper, under their
// binary names, in WORK/overrides, which the CLI config's dev_overrides point at; and the two
// do-nothing providers of the floors, each with a CLI config of its own.
func buildProviders(root, work string) error {
	overrides := filepath.Join(work, "overrides")
	if err := os.MkdirAll(overrides, 0o755); err != nil {
		return err
	}
	builds := []struct{ dir, pkg, out string }{
		{root, ".", filepath.Join(work, "real", "training")},
		{filepath.Join(root, "bench", "peers", "kubernetes"), "github.com/hashicorp/terraform-provider-kubernetes", filepath.Join(work, "real", "kubernetes")},
		{filepath.Join(root, "bench", "peers", "kubectl"), "github.com/alekc/terraform-provider-kubectl", filepath.Join(work, "real", "kubectl")},
		{filepath.Join(root, "bench"), "./rsswrap", filepath.Join(work, "rsswrap")},
		{filepath.Join(root, "bench", "schemafloor"), ".", filepath.Join(work, "schemafloor", "terraform-provider-training")},
		{filepath.Join(root, "bench", "schemafloor"), "./plugin", filepath.Join(work, "pluginfloor", "terraform-provider-training")},
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w\n%s", b.pkg, err, out)
		}
	}
	wrapper, err := os.ReadFile(filepath.Join(work, "rsswrap"))
	if err != nil {
		return err
	}
	for _, name := range []string{"training", "kubernetes", "kubectl"} {
		if err := os.WriteFile(filepath.Join(overrides, "terraform-provider-"+name), wrapper, 0o755); err != nil {
			return err
		}
	}
	if err := writeCLIConfig(filepath.Join(work, cliConfigFile), overrides, "kubetrain/training", "hashicorp/kubernetes", "alekc/kubectl"); err != nil {
		return err
	}
	if err := writeCLIConfig(filepath.Join(work, schemaFloorCLIConfigFile), filepath.Join(work, "schemafloor"), "kubetrain/training"); err != nil {
		return err
	}
	return writeCLIConfig(filepath.Join(work, pluginFloorCLIConfigFile), filepath.Join(work, "pluginfloor"), "kubetrain/training")
}

// writeCLIConfig writes a CLI configuration that takes the providers of sources from dir.
func writeCLIConfig(path, dir string, sources ...string) error {
	var b strings.Builder
	b.WriteString("provider_installation {\n  dev_overrides {\n")
	for _, source := range sources {
		fmt.Fprintf(&b, "    %q = %q\n", source, dir)
	}
	b.WriteString("  }\n  direct {}\n}\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func ensureNamespace(ctx context.Context, kubeconfig, name string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		return err
	}
	return nil
}

// defaultQueryTerraform is the newest Terraform make testacc built into ../.tools, or "".
func defaultQueryTerraform() string {
	found, _ := filepath.Glob(filepath.Join("..", ".tools", "terraform-v*", "terraform"))
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	abs, err := filepath.Abs(found[len(found)-1])
	if err != nil {
		return ""
	}
	return abs
}

// queryVersion names the Terraform that runs the query operation.
func queryVersion() string {
	if queryTerraform == "" {
		return "(none given: not run)"
	}
	return strings.TrimPrefix(filepath.Base(filepath.Dir(queryTerraform)), "terraform-")
}

// createUnrelatedPods fills namespace with count pods that belong to no job: another team's
// pods in a shared namespace. They name a scheduler the cluster does not run, so they stay
// Pending without a scheduler or kubelet working on them: the API server holds them and
// nothing else changes, which leaves the provider's own cost of their presence to measure. A
// namespace that already holds them is left as it is.
func createUnrelatedPods(ctx context.Context, kubeconfig, namespace string, count int) error {
	if count == 0 {
		return nil
	}
	if err := ensureNamespace(ctx, kubeconfig, namespace); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	existing, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: unrelatedLabel, Limit: 1})
	if err != nil {
		return err
	}
	if len(existing.Items) > 0 {
		return nil
	}
	logf("making %d unrelated pods in %s", count, namespace)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range count {
		g.Go(func() error {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%d", i), Labels: map[string]string{unrelatedLabel: "true", "app": "web"}},
				Spec: corev1.PodSpec{
					SchedulerName: "another-teams-scheduler",
					Containers:    []corev1.Container{{Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
				},
			}
			_, err := client.CoreV1().Pods(namespace).Create(gctx, pod, metav1.CreateOptions{})
			return err
		})
	}
	return g.Wait()
}

// unrelatedLabel marks the pods createUnrelatedPods makes.
const unrelatedLabel = "bench-unrelated"
