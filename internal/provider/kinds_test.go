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
	"github.com/hashicorp/terraform-plugin-framework/types"

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

// Every job resource plans a change of its worker count by its kind (workerCountPlan): a kind
// that cannot rescale is replaced, whatever the resource's own options say.
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
		var counts []string
		for name, a := range s.Schema.Attributes {
			ia, ok := a.(rschema.Int64Attribute)
			if !ok {
				continue
			}
			for _, m := range ia.PlanModifiers {
				if p, ok := m.(workerCountPlan); ok {
					counts = append(counts, name)
					if p.kind != kind {
						t.Errorf("training_%s_job: %s is planned as a %v's count", kind.Name, name, p.kind)
					}
					if kind.Rescalable() != (p.inPlace != nil) {
						t.Errorf("training_%s_job: %s says it rescales in place (%v), its kind says %v", kind.Name, name, p.inPlace != nil, kind.Rescalable())
					}
				}
			}
		}
		if len(counts) != 1 {
			t.Errorf("training_%s_job has %d worker counts planned by workerCountPlan (%v), want 1", kind.Name, len(counts), counts)
		}
	}
}
