package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

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
