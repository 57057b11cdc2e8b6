package provider

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// Every kind of job in the registry has everything a kind needs, and the provider serves no job
// resource that is not in the registry: a site forgotten when a kind is added (or removed) is a
// failure here, not a silent gap.
func TestEveryJobKindIsComplete(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	served := map[string]bool{}
	for _, newResource := range p.Resources(ctx) {
		var md resource.MetadataResponse
		newResource().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &md)
		served[md.TypeName] = true
		// A job resource (one that embeds jobResource, whose verbs it then serves) is a
		// registered kind's, with its model.
		if job, ok := newResource().(interface{ base() *jobResource }); ok {
			if b := job.base(); b.kind == nil || b.newModel == nil {
				t.Errorf("%s embeds jobResource without a kind or a model (kind %v, model %v): its plan would call a nil function",
					md.TypeName, b.kind != nil, b.newModel != nil)
			}
		}
		if name, ok := strings.CutSuffix(strings.TrimPrefix(md.TypeName, "training_"), "_job"); ok && jobs.KindByName(name) == nil {
			t.Errorf("the provider serves %s, but no kind %q is registered in jobs.Kinds()", md.TypeName, name)
		}
	}
	listed := map[string]bool{}
	if lp, ok := p.(interface {
		ListResources(context.Context) []func() list.ListResource
	}); ok {
		for _, newList := range lp.ListResources(ctx) {
			var md resource.MetadataResponse
			newList().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &md)
			listed[md.TypeName] = true
		}
	}
	kindAccepted := dataSourceKindValidator(t, p.DataSources(ctx))
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range jobs.Kinds() {
		typeName := "training_" + k.Name + "_job"
		if !served[typeName] {
			t.Errorf("kind %s: the provider serves no %s resource (jobResources)", k.Name, typeName)
		}
		if !listed[typeName] {
			t.Errorf("kind %s: the provider serves no %s list resource", k.Name, typeName)
		}
		if err := kindAccepted(k.Name); err != "" {
			t.Errorf("kind %s: the training_job data source refuses it: %s", k.Name, err)
		}
		for _, file := range []string{
			"../../examples/resources/" + typeName + "/resource.tf",
			"../../examples/resources/" + typeName + "/import.sh",
			"../../templates/resources/" + k.Name + "_job.md.tmpl",
			"../../docs/resources/" + k.Name + "_job.md",
		} {
			if _, err := os.Stat(file); err != nil {
				t.Errorf("kind %s has no %s: %v", k.Name, filepath.Clean(file), err)
			}
		}
		allowed := map[string]bool{}
		for _, role := range roles {
			for _, rule := range role.Rules {
				if slices.Contains(rule.APIGroups, k.GVR.Group) && slices.Contains(rule.Resources, k.GVR.Resource) {
					for _, v := range rule.Verbs {
						allowed[v] = true
					}
				}
			}
		}
		for _, verb := range []string{"get", "list", "watch", "create", "patch", "delete"} {
			if !allowed[verb] {
				t.Errorf("kind %s: %s grants no %q on %s", k.Name, filepath.Clean(rbacFile), verb, k.GVR.GroupResource())
			}
		}
	}
}

// The docs' index names every resource and data source the provider serves.
func TestTheDocsIndexNamesEveryResource(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	var names []string
	for _, newResource := range p.Resources(ctx) {
		var md resource.MetadataResponse
		newResource().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &md)
		names = append(names, md.TypeName)
	}
	for _, newDataSource := range p.DataSources(ctx) {
		var md datasource.MetadataResponse
		newDataSource().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "training"}, &md)
		names = append(names, md.TypeName)
	}
	for _, file := range []string{"../../templates/index.md.tmpl", "../../docs/index.md"} {
		index, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if !strings.Contains(string(index), "`"+name+"`") {
				t.Errorf("%s does not name %s", filepath.Clean(file), name)
			}
		}
	}
}

// dataSourceKindValidator returns a check of a kind name against the training_job data source's
// own validators of its kind attribute.
func dataSourceKindValidator(t *testing.T, dataSources []func() datasource.DataSource) func(string) string {
	t.Helper()
	ctx := context.Background()
	for _, newDataSource := range dataSources {
		ds := newDataSource()
		var md datasource.MetadataResponse
		ds.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "training"}, &md)
		if md.TypeName != "training_job" {
			continue
		}
		var s datasource.SchemaResponse
		ds.Schema(ctx, datasource.SchemaRequest{}, &s)
		attr, ok := s.Schema.Attributes["kind"].(dsschema.StringAttribute)
		if !ok {
			t.Fatal("training_job has no string attribute kind")
		}
		return func(name string) string {
			var problems []string
			for _, v := range attr.Validators {
				resp := &validator.StringResponse{}
				v.ValidateString(ctx, validator.StringRequest{Path: path.Root("kind"), ConfigValue: types.StringValue(name)}, resp)
				for _, d := range resp.Diagnostics.Errors() {
					problems = append(problems, d.Detail())
				}
			}
			return strings.Join(problems, "; ")
		}
	}
	t.Fatal("the provider serves no training_job data source")
	return nil
}

// Every resource has a schema version and an upgrader from each version before it, so the
// next change to a schema that old state cannot be read in has a place to go.
func TestEveryResourceCanUpgradeItsState(t *testing.T) {
	ctx := context.Background()
	for _, newResource := range New("test")().Resources(ctx) {
		r := newResource()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &md)
		upgrader, ok := r.(resource.ResourceWithUpgradeState)
		if !ok {
			t.Errorf("%s has no UpgradeState", md.TypeName)
			continue
		}
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		upgraders := upgrader.UpgradeState(ctx)
		for v := range s.Schema.Version {
			if _, ok := upgraders[v]; !ok {
				t.Errorf("%s is at schema version %d and has no upgrader from version %d", md.TypeName, s.Schema.Version, v)
			}
		}
		for v := range upgraders {
			if v >= s.Schema.Version {
				t.Errorf("%s has an upgrader from version %d, not before its schema version %d", md.TypeName, v, s.Schema.Version)
			}
		}
	}
}

// A job list's status filter accepts every phase a job's status can read, QUEUED included, and
// nothing else.
func TestJobListFilterAcceptsEveryPhase(t *testing.T) {
	ctx := context.Background()
	for _, newList := range listResources() {
		l := newList()
		var s list.ListResourceSchemaResponse
		l.ListResourceConfigSchema(ctx, list.ListResourceSchemaRequest{}, &s)
		attr, ok := s.Schema.Attributes["status"].(listschema.StringAttribute)
		if !ok {
			continue // the taints' list has no status
		}
		check := func(phase string) bool {
			for _, v := range attr.Validators {
				resp := &validator.StringResponse{}
				v.ValidateString(ctx, validator.StringRequest{Path: path.Root("status"), ConfigValue: types.StringValue(phase)}, resp)
				if resp.Diagnostics.HasError() {
					return false
				}
			}
			return true
		}
		var md resource.MetadataResponse
		l.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &md)
		for _, phase := range jobs.Phases {
			if !check(phase) {
				t.Errorf("list %s refuses status = %q", md.TypeName, phase)
			}
		}
		if check("DONE") {
			t.Errorf("list %s accepts status = \"DONE\"", md.TypeName)
		}
	}
}

// countSpecs are a small job of each kind, with two workers.
var countSpecs = map[string]jobs.Spec{
	"mpi":     jobs.MPIJobSpec{Name: "c", Namespace: "ns", Pod: jobs.PodOptions{Image: "i"}, LauncherCommand: []string{"mpirun", "x"}, Workers: 2},
	"tf":      jobs.TFJobSpec{Name: "c", Namespace: "ns", Pod: jobs.PodOptions{Image: "i"}, Command: []string{"python", "x"}, Workers: 2},
	"pytorch": jobs.PyTorchJobSpec{Name: "c", Namespace: "ns", Pod: jobs.PodOptions{Image: "i"}, Command: []string{"torchrun", "x"}, Workers: 2},
	"elastic": jobs.ElasticJobSpec{Name: "c", Namespace: "ns", Pod: jobs.PodOptions{Image: "i"}, Launcher: jobs.LauncherTorchrun, Script: "/x.py",
		Workers: 2, MinWorkers: 1, MaxWorkers: 4, ProcsPerNode: 1, MaxRetryCount: jobs.DefaultMaxRetryCount},
	"train": jobs.TrainJobSpec{Name: "c", Namespace: "ns", Runtime: jobs.RuntimeRef{Name: "torch", Kind: jobs.ClusterTrainingRuntimeKind}, Nodes: 2},
}

// Every job resource has one count, its kind's (worker_count, a TrainJob's num_nodes): the model
// reads it from the job object as the kind counts its workers, and a job built with another
// count has that many, so that what a change of it does is its kind's comparison's to say
// (jobs.Compare: in place where the kind's program takes it, a replacement elsewhere).
func TestEveryJobResourcePlansItsCountByItsKind(t *testing.T) {
	ctx := context.Background()
	for _, newResource := range jobResources {
		r := newResource()
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		job, ok := r.(interface{ base() *jobResource })
		if !ok {
			t.Fatalf("%T is in jobResources but is not a job resource", r)
		}
		kind := job.base().kind
		name := countAttribute(kind)
		if _, ok := s.Schema.Attributes[name].(rschema.Int64Attribute); !ok {
			t.Errorf("training_%s_job has no count %s", kind.Name, name)
			continue
		}
		spec := countSpecs[kind.Name]
		if spec == nil {
			t.Errorf("training_%s_job: no small job of its kind here; add one to countSpecs", kind.Name)
			continue
		}
		obj, _, err := spec.Build()
		if err != nil {
			t.Fatalf("%s: %v", kind.Name, err)
		}
		m := job.base().newModel()
		typ, ok := s.Schema.Type().TerraformType(ctx).(tftypes.Object)
		if !ok {
			t.Fatalf("%s: the schema is not an object", kind.Name)
		}
		null := map[string]tftypes.Value{}
		for a, at := range typ.AttributeTypes {
			null[a] = tftypes.NewValue(at, nil)
		}
		if diags := getModel(ctx, tfsdk.State{Schema: s.Schema, Raw: tftypes.NewValue(typ, null)}, m); diags.HasError() {
			t.Fatalf("%s: %v", kind.Name, diags)
		}
		if diags := m.read(ctx, obj); diags.HasError() {
			t.Fatalf("%s: %v", kind.Name, diags)
		}
		if got := m.workers().ValueInt64(); got != 2 {
			t.Errorf("training_%s_job reads a count of %d from a job of 2 workers", kind.Name, got)
		}
		*m.workers() = types.Int64Value(3)
		again, diags := m.spec(ctx)
		if diags.HasError() {
			t.Fatalf("%s: %v", kind.Name, diags)
		}
		if again.Kind() != kind {
			t.Errorf("training_%s_job builds a %s", kind.Name, again.Kind().Object)
			continue
		}
		built, _, err := again.Build()
		if err != nil {
			t.Fatalf("%s: %v", kind.Name, err)
		}
		if n, err := kind.Workers(built); err != nil || n != 3 {
			t.Errorf("training_%s_job with %s = 3 builds a job of %d workers (%v)", kind.Name, name, n, err)
		}
	}
}
