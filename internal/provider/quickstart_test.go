package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetrain/terraform-provider-training/cluster"
)

// The quick starts' platform folders install the operators with the helm, kubernetes and http
// providers, which the install lane cannot fetch (it has no registry): they are checked here,
// without a network, and their jobs folders, which need this provider alone, are initialised and
// validated by the install lane like every other example.
const quickStarts = "../../examples/quickstarts"

// isPlatformExample says whether an example folder is a quick start's platform part (or the
// module the clouds' platform parts share).
func isPlatformExample(dir string) bool {
	dir = filepath.ToSlash(dir)
	return strings.HasPrefix(dir, strings.TrimPrefix(quickStarts, "./")) && filepath.Base(dir) == "platform"
}

// hclFiles parses every .tf file of dir.
func hclFiles(t *testing.T, dir string) []*hclsyntax.Body {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s has no .tf file (%v)", dir, err)
	}
	parser := hclparse.NewParser()
	var bodies []*hclsyntax.Body
	for _, f := range files {
		file, diags := parser.ParseHCLFile(f)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", f, diags.Error())
		}
		body, ok := file.Body.(*hclsyntax.Body)
		if !ok {
			t.Fatalf("%s is not native HCL syntax", f)
		}
		bodies = append(bodies, body)
	}
	return bodies
}

// blocks are the blocks of that type and first labels among bodies.
func blocks(bodies []*hclsyntax.Body, typ string, labels ...string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range bodies {
		for _, block := range b.Blocks {
			if block.Type == typ && len(block.Labels) >= len(labels) && slices.Equal(block.Labels[:len(labels)], labels) {
				out = append(out, block)
			}
		}
	}
	return out
}

// literal is the value of a block's attribute when it is a constant string ("" otherwise).
func literal(block *hclsyntax.Block, name string) string {
	attr, ok := block.Body.Attributes[name]
	if !ok {
		return ""
	}
	v, diags := attr.Expr.Value(&hcl.EvalContext{})
	if diags.HasErrors() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// testedVersion is the current tested version of an operator in README's Requirements table.
func testedVersion(t *testing.T, operator string) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(regexp.QuoteMeta(operator) + ` \(v([0-9.]+),`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("README's Requirements list no tested version of %s", operator)
	}
	return string(m[1])
}

// The quick starts install what the Requirements say, at the versions the provider is tested with:
// every provider they use pinned; Kueue and Trainer's charts, mpi-operator's manifest and
// training-operator's kustomization at the tested releases; Kueue with the integration of every
// job kind; training-operator without its MPIJob controller and CRD; and the RBAC bindings naming
// roles the provider's RBAC example has.
func TestQuickStartsInstallWhatTheRequirementsSay(t *testing.T) {
	platform := hclFiles(t, filepath.Join(quickStarts, "common", "platform"))
	for _, cloud := range []string{"gke", "eks"} {
		for _, part := range []string{"platform", "jobs"} {
			dir := filepath.Join(quickStarts, cloud, part)
			bodies := hclFiles(t, dir)
			for _, tf := range blocks(bodies, "terraform") {
				for _, rp := range tf.Body.Blocks {
					if rp.Type != "required_providers" {
						continue
					}
					for name, attr := range rp.Body.Attributes {
						v, diags := attr.Expr.Value(&hcl.EvalContext{})
						if diags.HasErrors() || !v.Type().IsObjectType() || !v.Type().HasAttribute("version") {
							t.Errorf("%s: provider %s has no version pinned", dir, name)
						}
					}
				}
			}
			if part == "platform" && len(blocks(bodies, "module", "platform")) != 1 {
				t.Errorf("%s does not use the shared platform module", dir)
			}
		}
	}

	charts := map[string]string{"kueue": testedVersion(t, "Kueue"), "trainer": testedVersion(t, "Kubeflow Trainer")}
	for name, want := range charts {
		releases := blocks(platform, "resource", "helm_release", name)
		if len(releases) != 1 || literal(releases[0], "version") != want {
			t.Errorf("helm_release.%s: want one, of chart version %s", name, want)
		}
	}
	for _, data := range blocks(platform, "data", "http", "mpi_operator") {
		if !strings.Contains(literal(data, "url"), "/v"+testedVersion(t, "mpi-operator")+"/") {
			t.Errorf("mpi-operator's manifest is not of v%s: %s", testedVersion(t, "mpi-operator"), literal(data, "url"))
		}
	}

	var config struct {
		Integrations struct{ Frameworks []string } `json:"integrations"`
	}
	raw, err := os.ReadFile(filepath.Join(quickStarts, "common", "kueue-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &config); err != nil {
		t.Fatal(err)
	}
	for _, framework := range []string{"kubeflow.org/mpijob", "kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "trainer.kubeflow.org/trainjob"} {
		if !slices.Contains(config.Integrations.Frameworks, framework) {
			t.Errorf("Kueue's configuration leaves out %s", framework)
		}
	}

	raw, err = os.ReadFile(filepath.Join(quickStarts, "common", "training-operator", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := string(raw)
	for _, want := range []string{"?ref=v" + testedVersion(t, "training-operator") + "\n", "$patch: delete", "name: mpijobs.kubeflow.org",
		`"--enable-scheme=tfjob", "--enable-scheme=pytorchjob"]`} {
		if !strings.Contains(kustomization, want) {
			t.Errorf("training-operator's kustomization lacks %q", want)
		}
	}
	if strings.Contains(strings.ToLower(kustomization), "--enable-scheme=mpijob") {
		t.Error("training-operator's kustomization enables its MPIJob controller")
	}

	roles, err := cluster.ReadObjects[rbacv1.ClusterRole](rbacFile)
	if err != nil {
		t.Fatal(err)
	}
	var shipped []string
	for _, r := range roles {
		shipped = append(shipped, r.Name)
	}
	rbac, err := os.ReadFile(filepath.Join(quickStarts, "common", "platform", "rbac.tf"))
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`"(terraform-provider-training[a-z-]*)"`).FindAllSubmatch(rbac, -1)
	if len(named) < 6 {
		t.Errorf("rbac.tf binds %d roles", len(named))
	}
	for _, m := range named {
		if !slices.Contains(shipped, string(m[1])) {
			t.Errorf("rbac.tf binds %s, which the provider's RBAC example does not have", m[1])
		}
	}
}
