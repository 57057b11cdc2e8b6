package provider

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// vocabularyGuide is the docs' vocabulary table: the one name and shape of each concept the job
// resources and the runtime share.
const vocabularyGuide = "../../templates/guides/vocabulary.md.tmpl"

// vocabularyRow is a row of the table: a concept's name (a path, `[*]` stepping into a list's
// elements), its shape, and the resources that have it, each by its short name and, where the
// name sits elsewhere in it, at its own path.
type vocabularyRow struct {
	concept, name, shape string
	fields               []string
	at                   map[string]string
}

// vocabularySchemas are the schemas the table speaks of, by short name: every job resource and
// the runtime.
func vocabularySchemas(t *testing.T) map[string]schema.Schema {
	t.Helper()
	ctx := context.Background()
	out := map[string]schema.Schema{}
	for _, newResource := range append(slices.Clone(jobResources), newRuntimeResource) {
		r := newResource()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &md)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		out[strings.TrimPrefix(md.TypeName, "training_")] = s.Schema
	}
	return out
}

// jobShortNames are the short names of the job resources.
func jobShortNames(schemas map[string]schema.Schema) []string {
	var out []string
	for name := range schemas {
		if strings.HasSuffix(name, "_job") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// readVocabulary reads the table of the guide.
func readVocabulary(t *testing.T, jobNames []string) []vocabularyRow {
	t.Helper()
	raw, err := os.ReadFile(vocabularyGuide)
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile("`([^`]*)`")
	var rows []vocabularyRow
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "| ") || len(cells) != 4 || strings.TrimSpace(cells[0]) == "Concept" {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		names := code.FindAllStringSubmatch(cells[1], -1)
		if len(names) == 0 {
			t.Fatalf("vocabulary row %q names no attribute", line)
		}
		row := vocabularyRow{concept: cells[0], name: names[0][1], at: map[string]string{}}
		row.shape, _, _ = strings.Cut(cells[2], " `")
		if f := code.FindStringSubmatch(cells[2]); f != nil {
			for _, field := range strings.Split(strings.Trim(f[1], "{} "), ",") {
				row.fields = append(row.fields, strings.TrimSpace(field))
			}
		}
		for _, entry := range strings.Split(cells[3], ", ") {
			resourceName, at, _ := strings.Cut(entry, " as ")
			at = strings.Trim(at, "`")
			switch {
			case resourceName == "every job resource":
				for _, j := range jobNames {
					row.at[j] = row.name
				}
			case strings.HasPrefix(resourceName, "every job resource but "):
				but := strings.TrimPrefix(resourceName, "every job resource but ")
				for _, j := range jobNames {
					if j != but {
						row.at[j] = row.name
					}
				}
			default:
				row.at[resourceName] = cmpOr(at, row.name)
			}
		}
		rows = append(rows, row)
	}
	if len(rows) < 10 {
		t.Fatalf("the vocabulary table of %s has %d rows: it is not read", vocabularyGuide, len(rows))
	}
	return rows
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// lookUp finds the attribute at a path of a schema (steps by ".", "[*]" into a list's or a map's
// elements); blocks are found as such.
func lookUp(s schema.Schema, at string) (a schema.Attribute, block bool, ok bool) {
	attrs := s.Attributes
	steps := strings.Split(at, ".")
	for i, step := range steps {
		step = strings.TrimSuffix(step, "[*]")
		if i == 0 {
			if _, isBlock := s.Blocks[step]; isBlock && len(steps) == 1 {
				return nil, true, true
			}
		}
		a, ok = attrs[step]
		if !ok {
			return nil, false, false
		}
		if i == len(steps)-1 {
			return a, false, true
		}
		if attrs, ok = nestedAttributes(a); !ok {
			return nil, false, false
		}
	}
	return nil, false, false
}

// nestedAttributes are a nested attribute's attributes (of its object, or of each element's).
func nestedAttributes(a schema.Attribute) (map[string]schema.Attribute, bool) {
	switch n := a.(type) {
	case schema.SingleNestedAttribute:
		return n.Attributes, true
	case schema.ListNestedAttribute:
		return n.NestedObject.Attributes, true
	case schema.MapNestedAttribute:
		return n.NestedObject.Attributes, true
	case schema.SetNestedAttribute:
		return n.NestedObject.Attributes, true
	}
	return nil, false
}

// vocabularyShape says an attribute's shape in the table's words.
func vocabularyShape(a schema.Attribute) string {
	switch n := a.(type) {
	case schema.SingleNestedAttribute:
		return "object"
	case schema.MapNestedAttribute:
		return "map of objects"
	case schema.ListNestedAttribute:
		return "list of objects"
	case schema.SetNestedAttribute:
		return "set of objects"
	default:
		_ = n
	}
	switch t := a.GetType().(type) {
	case basetypes.StringType:
		return "string"
	case basetypes.Int64Type, basetypes.Float64Type, basetypes.NumberType, basetypes.Int32Type:
		return "number"
	case basetypes.BoolType:
		return "bool"
	case basetypes.ListType:
		return "list of " + plural(t.ElemType)
	case basetypes.SetType:
		return "set of " + plural(t.ElemType)
	case basetypes.MapType:
		return "map of " + plural(t.ElemType)
	}
	return fmt.Sprintf("%T", a.GetType())
}

func plural(t attr.Type) string {
	switch t.(type) {
	case basetypes.StringType:
		return "strings"
	case basetypes.Int64Type:
		return "numbers"
	case basetypes.ObjectType:
		return "objects"
	}
	return fmt.Sprintf("%T", t)
}

// Every job resource and the runtime speak the vocabulary table of the docs: each concept by its
// one name, in its one shape, in every resource the table lists.
func TestVocabulary_everyResourceSpeaksTheTableOfTheDocs(t *testing.T) {
	schemas := vocabularySchemas(t)
	for _, row := range readVocabulary(t, jobShortNames(schemas)) {
		for resourceName, at := range row.at {
			s, ok := schemas[resourceName]
			if !ok {
				t.Errorf("vocabulary %q: %q is no job resource and not the runtime", row.concept, resourceName)
				continue
			}
			a, block, ok := lookUp(s, at)
			switch {
			case !ok:
				t.Errorf("vocabulary %q: training_%s has no %s", row.concept, resourceName, at)
			case block && row.shape != "block":
				t.Errorf("vocabulary %q: training_%s's %s is a block, the table says %s", row.concept, resourceName, at, row.shape)
			case block:
			case vocabularyShape(a) != row.shape:
				t.Errorf("vocabulary %q: training_%s's %s is a %s, the table says %s", row.concept, resourceName, at, vocabularyShape(a), row.shape)
			case row.fields != nil:
				var got []string
				inner, _ := nestedAttributes(a)
				for name := range inner {
					got = append(got, name)
				}
				for _, f := range row.fields {
					if !slices.Contains(got, f) {
						t.Errorf("vocabulary %q: training_%s's %s has %v, not %s of the table", row.concept, resourceName, at, got, f)
					}
				}
			}
		}
	}
}

// oldWords are names the vocabulary replaced, each with what says it now: none may come back, at
// any depth of any job resource or the runtime.
var oldWords = map[string]string{
	"slots_per_worker":  "processes_per_worker",
	"slots":             "processes_per_worker",
	"scheduling_policy": "gang_scheduling",
	"queue":             "queue_name (Kueue) or gang_scheduling.volcano_queue (Volcano)",
	"priority_class":    "priority_class_name",
	"launcher_cpu":      "roles.launcher.cpu",
	"launcher_memory":   "roles.launcher.memory",
	"ps_cpu":            "roles.ps.cpu",
	"ps_memory":         "roles.ps.memory",
	"etcd_image":        "roles.etcd.image",
	"etcd_cpu":          "roles.etcd.cpu",
	"etcd_memory":       "roles.etcd.memory",
	"toleration":        "tolerations",
}

// onlyInside are names that mean one thing inside one object and must not stand alone.
var onlyInside = map[string]string{"min_workers": "elastic", "max_workers": "elastic", "max_restarts": "elastic"}

// A concept's name appears in one form only: no job resource or runtime has a name the
// vocabulary replaced, the elastic bounds only inside `elastic`, no block but `timeouts`, and an
// attribute of one name has one shape wherever it is.
func TestVocabulary_aConceptHasOneNameAndOneShape(t *testing.T) {
	schemas := vocabularySchemas(t)
	shapes := map[string]map[string][]string{} // name -> shape -> where
	var walk func(resourceName, prefix, parent string, attrs map[string]schema.Attribute)
	walk = func(resourceName, prefix, parent string, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			where := "training_" + resourceName + "." + prefix + name
			if now, old := oldWords[name]; old {
				t.Errorf("%s: %q is %s in the vocabulary", where, name, now)
			}
			if inside, ok := onlyInside[name]; ok && parent != inside {
				t.Errorf("%s: %q stands only inside %q", where, name, inside)
			}
			shape := vocabularyShape(a)
			if shapes[name] == nil {
				shapes[name] = map[string][]string{}
			}
			shapes[name][shape] = append(shapes[name][shape], where)
			if inner, ok := nestedAttributes(a); ok {
				walk(resourceName, prefix+name+".", name, inner)
			}
		}
	}
	for resourceName, s := range schemas {
		for name := range s.Blocks {
			if name != "timeouts" {
				t.Errorf("training_%s has a block %q: a single object is written name = { ... }, and timeouts is the only block", resourceName, name)
			}
		}
		walk(resourceName, "", "", s.Attributes)
	}
	for name, byShape := range shapes {
		if len(byShape) > 1 {
			t.Errorf("%q has %d shapes: %v", name, len(byShape), byShape)
		}
	}
}

// Nothing users read names an attribute the vocabulary replaced: not the docs, not the examples
// they copy from.
func TestVocabulary_theDocsNameNoAttributeThatIsGone(t *testing.T) {
	var names []string
	for old := range oldWords {
		names = append(names, regexp.QuoteMeta(old))
	}
	sort.Strings(names)
	// As an attribute: in backticks, or set in HCL.
	gone := regexp.MustCompile("(`(" + strings.Join(names, "|") + ")`)|(?m)^\\s*(" + strings.Join(names, "|") + ")\\s*(=|\\{)")
	for _, root := range []string{"../../docs", "../../examples", "../../templates", "../../demo"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(raw), "\n") {
				if m := gone.FindString(line); m != "" {
					t.Errorf("%s:%d names %s, which the vocabulary replaced", p, i+1, strings.TrimSpace(m))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
