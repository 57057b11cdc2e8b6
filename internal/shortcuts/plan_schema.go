package shortcuts

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/internal/planmod"
)

// defaultsOf walks the attributes and blocks at prefix (dotted, "" at the root): it returns the
// defaults in them and fails on what planShape.plan cannot check: a nested attribute's plan
// modifier that may change an unchanged plan, a default that is not static, a write-only
// attribute, a default inside a set or map.
func defaultsOf(ctx context.Context, attrs map[string]schema.Attribute, blocks map[string]schema.Block, prefix string) (map[string]*attrDefault, error) {
	out := map[string]*attrDefault{}
	for name, a := range attrs {
		// A top-level attribute's modifiers that may change an unchanged plan are run
		// (planShape.modifiers); a nested one's fail.
		d, err := attributeDefault(ctx, a, prefix+name, prefix != "")
		if err != nil {
			return nil, err
		}
		if d != nil {
			out[name] = d
		}
	}
	for name, b := range blocks {
		at := prefix + name
		if err := noModifierMayChange(b, at); err != nil {
			return nil, err
		}
		var inside map[string]*attrDefault
		var err error
		single := false
		switch b := b.(type) {
		case schema.ListNestedBlock:
			err = noModifierMayChange(b.NestedObject, at)
			if err == nil {
				inside, err = defaultsOf(ctx, b.NestedObject.Attributes, b.NestedObject.Blocks, at+".")
			}
		case schema.SingleNestedBlock:
			single = true
			inside, err = defaultsOf(ctx, b.Attributes, b.Blocks, at+".")
		default:
			err = fmt.Errorf("%s: a %T is not walked", at, b)
		}
		if err != nil {
			return nil, err
		}
		if len(inside) > 0 {
			out[name] = &attrDefault{inside: inside, single: single}
		}
	}
	return out, nil
}

// attributeDefault is the default of the attribute at p (nested: not a top-level one) and of the
// attributes inside it, nil when none has one.
func attributeDefault(ctx context.Context, a schema.Attribute, p string, nested bool) (*attrDefault, error) {
	if nested {
		if err := noModifierMayChange(a, p); err != nil {
			return nil, err
		}
	}
	if a.IsWriteOnly() {
		// Terraform proposes it null, and the framework plans it null: it has no default, and a
		// proposal that is the prior state keeps it null.
		if nested {
			return nil, fmt.Errorf("%s is write-only", p)
		}
		return nil, nil
	}
	d := &attrDefault{}
	value, err := staticDefault(ctx, a, p)
	if err != nil {
		return nil, err
	}
	d.value = value
	switch a := a.(type) {
	case schema.ListNestedAttribute:
		if err := noModifierMayChange(a.NestedObject, p); err != nil {
			return nil, err
		}
		d.inside, err = defaultsOf(ctx, a.NestedObject.Attributes, nil, p+".")
	case schema.SingleNestedAttribute:
		d.single = true
		d.inside, err = defaultsOf(ctx, a.Attributes, nil, p+".")
	case schema.SetNestedAttribute:
		err = noDefaultsIn(ctx, a.NestedObject, p)
	case schema.MapNestedAttribute:
		err = noDefaultsIn(ctx, a.NestedObject, p)
	}
	if err != nil {
		return nil, err
	}
	if len(d.inside) == 0 {
		d.inside = nil
	}
	if d.value == nil && d.inside == nil {
		return nil, nil
	}
	return d, nil
}

// noDefaultsIn fails when an attribute of a set's or map's objects has a default: which
// configured object such a default belongs to is not a position.
func noDefaultsIn(ctx context.Context, o schema.NestedAttributeObject, p string) error {
	if err := noModifierMayChange(o, p); err != nil {
		return err
	}
	inside, err := defaultsOf(ctx, o.Attributes, nil, p+".")
	if err == nil && len(inside) > 0 {
		err = fmt.Errorf("%s: defaults inside a set or map", p)
	}
	return err
}

// staticDefault is the value of a's default (its Default field), nil without one. Only the
// framework's static defaults are taken: their value is the same at every path.
func staticDefault(ctx context.Context, a schema.Attribute, p string) (*tftypes.Value, error) {
	field := reflect.ValueOf(a).FieldByName("Default")
	if !field.IsValid() || field.IsNil() {
		return nil, nil
	}
	def := field.Interface()
	if pkg := reflect.TypeOf(def).PkgPath(); !strings.HasPrefix(pkg, frameworkSchemaPackages) || !strings.HasSuffix(pkg, "default") {
		return nil, fmt.Errorf("%s: the default %T is not one of the framework's static defaults", p, def)
	}
	at := path.Root(p) // the static defaults do not read their path
	var v attr.Value
	var diags diag.Diagnostics
	switch def := def.(type) {
	case defaults.String:
		r := &defaults.StringResponse{}
		def.DefaultString(ctx, defaults.StringRequest{Path: at}, r)
		v, diags = r.PlanValue, r.Diagnostics
	case defaults.Bool:
		r := &defaults.BoolResponse{}
		def.DefaultBool(ctx, defaults.BoolRequest{Path: at}, r)
		v, diags = r.PlanValue, r.Diagnostics
	case defaults.Int64:
		r := &defaults.Int64Response{}
		def.DefaultInt64(ctx, defaults.Int64Request{Path: at}, r)
		v, diags = r.PlanValue, r.Diagnostics
	case defaults.List:
		r := &defaults.ListResponse{}
		def.DefaultList(ctx, defaults.ListRequest{Path: at}, r)
		v, diags = r.PlanValue, r.Diagnostics
	case defaults.Map:
		r := &defaults.MapResponse{}
		def.DefaultMap(ctx, defaults.MapRequest{Path: at}, r)
		v, diags = r.PlanValue, r.Diagnostics
	default:
		return nil, fmt.Errorf("%s: a %T default is not read", p, def)
	}
	if diags.HasError() {
		return nil, fmt.Errorf("%s: %v", p, diags)
	}
	tv, err := v.ToTerraformValue(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &tv, nil
}

// frameworkSchemaPackages is where the framework's own plan modifiers and defaults live.
const frameworkSchemaPackages = "github.com/hashicorp/terraform-plugin-framework/resource/schema/"

// identityKeepingModifiers are the framework's plan modifiers that change nothing when the plan
// of an attribute is its state: the replace modifiers (which return when the values are equal)
// and the unknown-value ones (an unchanged plan holds no unknown value).
var identityKeepingModifiers = map[string]bool{
	"requiresReplaceIfModifier":  true,
	"useStateForUnknownModifier": true,
	"useNonNullStateForUnknown":  true,
}

// toRun are the plan modifiers of the attribute, block or nested object s (its PlanModifiers
// field) that may change an unchanged plan: all but the framework's identityKeepingModifiers
// and the provider's that say they are no-ops there (ModifierNoOpOnUnchangedPlan).
func toRun(s any) []any {
	var run []any
	for _, m := range planmod.Of(s) {
		if _, ok := m.(ModifierNoOpOnUnchangedPlan); ok {
			continue
		}
		if t := reflect.TypeOf(m); strings.HasPrefix(t.PkgPath(), frameworkSchemaPackages) && identityKeepingModifiers[t.Name()] {
			continue
		}
		run = append(run, m)
	}
	return run
}

// noModifierMayChange fails when the nested attribute, block or object s at p has a plan modifier
// that may change an unchanged plan (toRun): only those of top-level attributes are run.
func noModifierMayChange(s any, p string) error {
	if run := toRun(s); len(run) > 0 {
		return fmt.Errorf("%s: the plan modifier %T of a nested attribute may change an unchanged plan", p, run[0])
	}
	return nil
}

// runModifier returns what runs the plan modifier m of the top-level attribute name on an
// unchanged plan and says whether it keeps it: the planned value stays the state's, with no
// replacement and no error.
func runModifier(name string, m any) (func(ctx context.Context, config tfsdk.Config, state tfsdk.State) bool, error) {
	p := path.Root(name)
	if !planmod.Runnable(m) {
		return nil, fmt.Errorf("%s: the plan modifier %T is not run", name, m)
	}
	return func(ctx context.Context, config tfsdk.Config, state tfsdk.State) bool {
		r, ok := planmod.Run(ctx, m, p, config, tfsdk.Plan(state), state)
		return ok && !r.Replace && len(r.Diags) == 0 && r.Planned.Equal(r.State)
	}, nil
}
