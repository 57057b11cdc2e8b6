package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// exampleImport reads the docs' import example of a resource type: `terraform import ADDRESS ID`.
func exampleImport(t *testing.T, typeName string) (address, id string) {
	t.Helper()
	raw, err := os.ReadFile("../../examples/resources/" + typeName + "/import.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^terraform import (\S+) (\S+)$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatalf("%s/import.sh has no terraform import line", typeName)
	}
	return m[1], m[2]
}

// exampleConfig is the docs' example of a job resource type, each job waiting only until it
// is created: the examples ask for GPUs, memory and claims that the local cluster's nodes do
// not all have, and what their pods become is other tests' business. Its outputs, which show
// the status, are left out: it moves on while the jobs start, and a plan would save it.
func exampleConfig(t *testing.T, typeName string) string {
	t.Helper()
	raw, err := os.ReadFile("../../examples/resources/" + typeName + "/resource.tf")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile(`(?ms)^resource "training_\w+_job" "\w+" \{\n.*?^\}\n`)
	config := blocks.ReplaceAllStringFunc(string(raw), func(block string) string {
		if strings.Contains(block, "wait_for") {
			return block
		}
		header, body, _ := strings.Cut(block, "\n")
		return header + "\n  wait_for = \"created\"\n" + body
	})
	config = regexp.MustCompile(`(?ms)^output "\w+" \{\n.*?^\}\n`).ReplaceAllString(config, "")
	return providerConfig() + config
}

// Every job example of the docs applies, plans empty after its apply, and its import example
// gives the state the apply did; then a label added changes the job in place, and a new name
// replaces it.
func TestAccExamples_applyPlanEmptyImportUpdateAndReplace(t *testing.T) {
	a := newAPI(t)
	for _, kind := range jobs.Kinds() {
		typeName := "training_" + kind.Name + "_job"
		t.Run(kind.Name, func(t *testing.T) {
			config := exampleConfig(t, typeName)
			address, id := exampleImport(t, typeName)
			_, name, _ := strings.Cut(id, "/")
			resourceType, resourceName, _ := strings.Cut(address, ".")
			header := fmt.Sprintf("resource %q %q {\n", resourceType, resourceName)
			if !strings.Contains(config, header) {
				t.Fatalf("the example has no %s", strings.TrimSpace(header))
			}
			labelled := strings.Replace(config, header, header+"  labels = { team = \"vision\" }\n", 1)
			nameLine := regexp.MustCompile(`(?m)^(\s+name\s+=\s+)"` + regexp.QuoteMeta(name) + `"$`)
			renamed := nameLine.ReplaceAllString(labelled, `${1}"`+name+`2"`) // a name every kind allows
			if renamed == labelled {
				t.Fatalf("the example names its job otherwise than %q", name)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				CheckDestroy:             resource.ComposeTestCheckFunc(checkGone(a, kind, name), checkGone(a, kind, name+"2")),
				Steps: []resource.TestStep{
					{Config: config},
					{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
					{
						ResourceName: address, ImportState: true, ImportStateId: id, ImportStateVerify: true,
						// wait_for is Terraform's alone (import gives the default); the status moves on.
						ImportStateVerifyIgnore: []string{"duration", "accelerator_hours", "timeouts", "wait_for", "status", "start_time", "completion_time", "instances"},
					},
					{Config: labelled, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate)}}},
					{Config: renamed, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(address, plancheck.ResourceActionDestroyBeforeCreate)}}},
				},
			})
		})
	}
}

// Every other example of the docs (the PSA-restricted job, the RDMA job, the sidecar) plans
// against the local cluster without an error: its attributes, its patches and its plan-time
// checks are what the docs say.
func TestAccExamples_everyOtherExamplePlans(t *testing.T) {
	newAPI(t)
	files, err := filepath.Glob("../../examples/resources/*/*.tf")
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for _, file := range files {
		if base := filepath.Base(file); base == "resource.tf" || base == "versions.tf" {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		planned++
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps:                    []resource.TestStep{{Config: providerConfig() + string(raw), PlanOnly: true, ExpectNonEmptyPlan: true}},
			})
		})
	}
	if planned < 3 {
		t.Errorf("%d other examples planned, want the restricted, RDMA and sidecar ones at least", planned)
	}
}

// Every example of a data source and of an action is a valid configuration (they name jobs and
// queues of a team's cluster, which the local one has not, so they are validated, not applied);
// the actions' where the CLI has actions (Terraform 1.14 and later).
func TestAccExamples_dataSourcesAndActionsValidate(t *testing.T) {
	newAPI(t)
	dirs, err := filepath.Glob("../../examples/data-sources/*")
	if err != nil {
		t.Fatal(err)
	}
	actions, err := filepath.Glob("../../examples/actions/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(dirs, actions...) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if strings.Contains(dir, "/actions/") {
				requireCLI(t, "1.14.0", "actions")
			}
			t.Parallel()
			files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
			if err != nil {
				t.Fatal(err)
			}
			config := providerConfig()
			for _, f := range files {
				if filepath.Base(f) == "versions.tf" {
					continue
				}
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				config += string(raw)
			}
			w := newWorkspace(t)
			w.write(config)
			w.run("validate")
		})
	}
	if len(dirs) < 4 || len(actions) < 2 {
		t.Errorf("%d data source and %d action examples, want 4 and 2 at least", len(dirs), len(actions))
	}
}

// Every guide's configuration blocks (those it includes from examples/ and those written in it)
// form one configuration that validates, as a reader who copies them all into one folder gets
// it: no block declared twice, no reference to one the guide does not have. The provider block
// is the test's unless the guide writes its own; a guide's `list` blocks belong in a query file,
// which is left out, and so are a quick start's platform files, a configuration of its own
// applied before the jobs'.
func TestAccGuides_eachGuidesBlocksValidateTogether(t *testing.T) {
	newAPI(t)
	guides, err := filepath.Glob("../../templates/guides/*.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	included := regexp.MustCompile(`\{\{ tffile "([^"]+)" \}\}`)
	inline := regexp.MustCompile("(?s)```(?:terraform|hcl)\n(.*?)```")
	validated := 0
	for _, guide := range guides {
		raw, err := os.ReadFile(guide)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []string
		for _, m := range included.FindAllStringSubmatch(string(raw), -1) {
			if filepath.Base(m[1]) == "versions.tf" {
				continue // the test's CLI configuration installs the provider
			}
			if isPlatformExample(filepath.Dir(filepath.Join("../..", m[1]))) {
				continue // a quick start's other configuration, of other providers (TestQuickStarts...)
			}
			file, err := os.ReadFile(filepath.Join("../..", m[1]))
			if err != nil {
				t.Fatalf("%s includes %s: %v", filepath.Base(guide), m[1], err)
			}
			blocks = append(blocks, string(file))
		}
		for _, m := range inline.FindAllStringSubmatch(string(raw), -1) {
			if !regexp.MustCompile(`(?m)^list "`).MatchString(m[1]) {
				blocks = append(blocks, m[1])
			}
		}
		if len(blocks) == 0 {
			continue
		}
		config := strings.Join(blocks, "\n")
		if !strings.Contains(config, `provider "training" {`) {
			config = providerConfig() + config
		}
		validated++
		t.Run(strings.TrimSuffix(filepath.Base(guide), ".md.tmpl"), func(t *testing.T) {
			if strings.Contains(config, "identity = {") {
				requireCLI(t, "1.12.0", "import by identity")
			}
			t.Parallel()
			w := newWorkspace(t)
			w.write(config)
			if out, err := w.try(nil, "validate"); err != nil {
				t.Errorf("the guide's blocks do not validate together (%v):\n%s", err, out)
			}
		})
	}
	if validated < 5 {
		t.Errorf("%d guides validated, want every guide with blocks", validated)
	}
}

// Every folder of examples/ names the provider's source in its own required_providers block, as
// a reader who copies the folder needs: without it Terraform looks for hashicorp/training. (The
// install lane initialises each folder against a release; this says it without one.)
func TestEveryExampleFolderNamesTheProvidersSource(t *testing.T) {
	folders := map[string]bool{}
	err := filepath.WalkDir("../../examples", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".tf" {
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dir := filepath.Dir(p)
			folders[dir] = folders[dir] || strings.Contains(string(raw), `source  = "kubetrain/training"`)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, named := range folders {
		if !named && !isPlatformExample(dir) {
			t.Errorf("%s: no required_providers block names kubetrain/training (add its versions.tf)", strings.TrimPrefix(dir, "../../"))
		}
	}
}
