// Package shapes turns this provider's job schemas into alternatives of the same content in
// another shape, and a stored state of the real schema into one of the alternative's, so that
// bench/schemafloor can serve each alternative and the bench can measure what Terraform's own
// cost of a plan owes to the schema's shape (make bench-shapes).
package shapes

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A Shape is an alternative to the job schemas.
type Shape struct {
	Name        string
	Description string
	// schema turns a job resource's schema into the shape's.
	schema func(*tfprotov6.SchemaBlock)
	// state turns a job's stored attributes into the shape's, in place; nil: as they are.
	state func(attrs map[string]any, block *tfprotov6.SchemaBlock)
}

// StatusObject is the name of the attribute that holds the computed attributes in the
// "status-object" shape.
const StatusObject = "status_all"

// Shapes are the alternatives measured, the schema as it is first.
var Shapes = []Shape{
	{Name: "as-is", Description: "this provider's job schemas as they are", schema: func(*tfprotov6.SchemaBlock) {}},
	{Name: "status-object", Description: "the attributes only the provider sets (status, instances, uid, ...) in one computed object attribute",
		schema: statusObjectSchema, state: statusObjectState},
	{Name: "no-computed", Description: "without the attributes only the provider sets (what they cost Terraform)",
		schema: func(b *tfprotov6.SchemaBlock) { b.Attributes = configurable(b) }},
	{Name: "nested-attributes", Description: "every block (elastic, toleration, tensorboard, timeouts) as a nested attribute",
		schema: nestedAttributes},
	{Name: "string-sets", Description: "every list of strings as a set of strings",
		schema: func(b *tfprotov6.SchemaBlock) { stringSets(b) }},
}

// Named is the shape of that name.
func Named(name string) (Shape, error) {
	for _, s := range Shapes {
		if s.Name == name {
			return s, nil
		}
	}
	return Shape{}, fmt.Errorf("no schema shape %q", name)
}

// IsJob says whether a resource type is one of the job resources the shapes change.
func IsJob(typeName string) bool { return strings.HasSuffix(typeName, "_job") }

// Schema is the shape's schema of a job resource (a copy; the original is left as it is).
func (s Shape) Schema(schema *tfprotov6.Schema) *tfprotov6.Schema {
	out := *schema
	block := copyBlock(schema.Block)
	s.schema(block)
	out.Block = block
	return &out
}

// State is a job's stored attributes (a state file's JSON) of the original schema block, in the
// shape's form.
func (s Shape) State(raw []byte, original *tfprotov6.SchemaBlock) ([]byte, error) {
	if s.state == nil {
		return raw, nil
	}
	var attrs map[string]any
	if err := json.Unmarshal(raw, &attrs); err != nil {
		return nil, err
	}
	s.state(attrs, original)
	return json.Marshal(attrs)
}

func copyBlock(b *tfprotov6.SchemaBlock) *tfprotov6.SchemaBlock {
	out := *b
	out.Attributes = make([]*tfprotov6.SchemaAttribute, len(b.Attributes))
	for i, a := range b.Attributes {
		c := *a
		out.Attributes[i] = &c
	}
	out.BlockTypes = make([]*tfprotov6.SchemaNestedBlock, len(b.BlockTypes))
	for i, nb := range b.BlockTypes {
		c := *nb
		c.Block = copyBlock(nb.Block)
		out.BlockTypes[i] = &c
	}
	return &out
}

func computedOnly(a *tfprotov6.SchemaAttribute) bool { return a.Computed && !a.Optional && !a.Required }

// configurable are b's attributes but those only the provider sets.
func configurable(b *tfprotov6.SchemaBlock) []*tfprotov6.SchemaAttribute {
	var out []*tfprotov6.SchemaAttribute
	for _, a := range b.Attributes {
		if !computedOnly(a) {
			out = append(out, a)
		}
	}
	return out
}

func statusObjectSchema(b *tfprotov6.SchemaBlock) {
	types := map[string]tftypes.Type{}
	for _, a := range b.Attributes {
		if computedOnly(a) {
			types[a.Name] = a.ValueType()
		}
	}
	b.Attributes = append(configurable(b), &tfprotov6.SchemaAttribute{Name: StatusObject, Type: tftypes.Object{AttributeTypes: types}, Computed: true})
	sort.Slice(b.Attributes, func(i, j int) bool { return b.Attributes[i].Name < b.Attributes[j].Name })
}

func statusObjectState(attrs map[string]any, original *tfprotov6.SchemaBlock) {
	status := map[string]any{}
	for _, a := range original.Attributes {
		if computedOnly(a) {
			status[a.Name] = attrs[a.Name]
			delete(attrs, a.Name)
		}
	}
	attrs[StatusObject] = status
}

func nestedAttributes(b *tfprotov6.SchemaBlock) {
	for _, nb := range b.BlockTypes {
		nestedAttributes(nb.Block)
		nesting := tfprotov6.SchemaObjectNestingModeList
		if nb.Nesting == tfprotov6.SchemaNestedBlockNestingModeSingle {
			nesting = tfprotov6.SchemaObjectNestingModeSingle
		}
		b.Attributes = append(b.Attributes, &tfprotov6.SchemaAttribute{Name: nb.TypeName, Optional: true, Computed: true,
			NestedType:  &tfprotov6.SchemaObject{Nesting: nesting, Attributes: nb.Block.Attributes},
			Description: nb.Block.Description})
	}
	b.BlockTypes = nil
	sort.Slice(b.Attributes, func(i, j int) bool { return b.Attributes[i].Name < b.Attributes[j].Name })
}

func stringSets(b *tfprotov6.SchemaBlock) {
	for _, a := range b.Attributes {
		if l, ok := a.Type.(tftypes.List); ok && l.ElementType.Is(tftypes.String) {
			a.Type = tftypes.Set{ElementType: tftypes.String}
		}
	}
	for _, nb := range b.BlockTypes {
		stringSets(nb.Block)
	}
}
