package shortcuts

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// schemaWalk validates the attributes and blocks of a configuration as the framework's
// SchemaValidate does; ok turns false on anything it cannot answer as the framework would.
type schemaWalk struct {
	ctx    context.Context
	config tfsdk.Config
	caps   validator.ValidateSchemaClientCapabilities
	diags  *diag.Diagnostics
	ok     bool
}

// The framework's own diagnostics of a configuration, word for word.
const (
	readOnlySummary = "Invalid Configuration for Read-Only Attribute"
	readOnlyDetail  = "Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.\n\n" +
		"Refer to the provider documentation or contact the provider developers for additional information about configurable and read-only attributes that are supported."
	writeOnlySummary = "WriteOnly Attribute Not Allowed"
	writeOnlyDetail  = "The resource contains a non-null value for WriteOnly attribute %s. Write-only attributes are only supported in Terraform 1.11 and later."
	requiredSummary  = "Missing Configuration for Required Attribute"
	requiredDetail   = "Must set a configuration value for the %s attribute as the provider has marked it as required.\n\n" +
		"Refer to the provider documentation or contact the provider developers for additional information about configurable attributes that are required."
)

// object walks the attributes and blocks of the object v at p (e its expression; both empty at
// the configuration's root); the values inside a null or unknown object are null, as the
// framework reads them.
func (w *schemaWalk) object(p path.Path, e path.Expression, attrs map[string]schema.Attribute, blocks map[string]schema.Block, v tftypes.Value) {
	var vals map[string]tftypes.Value
	if v.IsKnown() && !v.IsNull() {
		if err := v.As(&vals); err != nil {
			w.ok = false
			return
		}
	}
	at := func(name string, t attr.Type) tftypes.Value {
		if tv, ok := vals[name]; ok {
			return tv
		}
		return tftypes.NewValue(t.TerraformType(w.ctx), nil)
	}
	inside := func(name string) (path.Path, path.Expression) {
		if len(p.Steps()) == 0 {
			return path.Root(name), path.MatchRoot(name)
		}
		return p.AtName(name), e.AtName(name)
	}
	for name, a := range attrs {
		ap, ae := inside(name)
		w.attribute(ap, ae, a, at(name, a.GetType()))
	}
	for name, b := range blocks {
		bp, be := inside(name)
		w.block(bp, be, b, at(name, b.Type()))
	}
}

// attribute validates the attribute a at p, whose configured value is tv.
func (w *schemaWalk) attribute(p path.Path, e path.Expression, a schema.Attribute, tv tftypes.Value) {
	av, ok := w.value(p, a.GetType(), tv)
	if !ok {
		return
	}
	null, unknown := av.IsNull(), av.IsUnknown()
	if a.IsComputed() && !a.IsOptional() && !null {
		w.diags.AddAttributeError(p, readOnlySummary, readOnlyDetail)
	}
	if a.IsRequired() && null {
		w.diags.AddAttributeError(p, requiredSummary, fmt.Sprintf(requiredDetail, p.String()))
	}
	if !w.caps.WriteOnlyAttributesAllowed && a.IsWriteOnly() && !null {
		w.diags.AddAttributeError(p, writeOnlySummary, fmt.Sprintf(writeOnlyDetail, p.String()))
	}
	w.validators(p, e, a, av)
	switch a := a.(type) {
	case schema.ListNestedAttribute:
		w.elements(p, e, a.NestedObject.Attributes, a.NestedObject.Validators, av, tv, false)
	case schema.SetNestedAttribute:
		w.elements(p, e, a.NestedObject.Attributes, a.NestedObject.Validators, av, tv, true)
	case schema.MapNestedAttribute:
		w.mapElements(p, e, a.NestedObject.Attributes, a.NestedObject.Validators, av, tv)
	case schema.SingleNestedAttribute:
		if !null && !unknown {
			w.nestedObject(p, e, a.Attributes, nil, a.Validators, av, tv)
		}
	}
	if msg := a.GetDeprecationMessage(); msg != "" && !null && !unknown {
		w.diags.AddAttributeWarning(p, "Attribute Deprecated", msg)
	}
}

// value is the configured value tv of type t at p, once it validates itself as the framework
// has it do when it reads it (an Int64's number must be an integer); ok is false when it does
// not, the error said, or when it cannot be read (then w.ok is false too).
func (w *schemaWalk) value(p path.Path, t attr.Type, tv tftypes.Value) (attr.Value, bool) {
	av, err := t.ValueFromTerraform(w.ctx, tv)
	if err != nil {
		w.ok = false
		return nil, false
	}
	var diags diag.Diagnostics
	if v, ok := av.(xattr.ValidateableAttribute); ok {
		resp := xattr.ValidateAttributeResponse{}
		v.ValidateAttribute(w.ctx, xattr.ValidateAttributeRequest{Path: p}, &resp)
		diags = resp.Diagnostics
	} else if vt, ok := t.(xattr.TypeWithValidate); ok { //nolint:staticcheck // the framework still runs it, and so do the base types
		diags = vt.Validate(w.ctx, tv, p)
	}
	w.diags.Append(diags...)
	return av, !diags.HasError()
}

// block validates the block b at p, whose configured value is tv.
func (w *schemaWalk) block(p path.Path, e path.Expression, b schema.Block, tv tftypes.Value) {
	av, ok := w.value(p, b.Type(), tv)
	if !ok {
		return
	}
	switch b := b.(type) {
	case schema.ListNestedBlock:
		w.validators(p, e, b, av)
		list, ok := av.(basetypes.ListValuable)
		if !ok {
			w.ok = false
			return
		}
		l, diags := list.ToListValue(w.ctx)
		if diags.HasError() {
			w.ok = false
			return
		}
		elems := listElements(tv)
		for i, ev := range l.Elements() {
			if i >= len(elems) {
				w.ok = false
				return
			}
			w.nestedObject(p.AtListIndex(i), e.AtListIndex(i), b.NestedObject.Attributes, b.NestedObject.Blocks, b.NestedObject.Validators, ev, elems[i])
		}
	case schema.SingleNestedBlock:
		w.validators(p, e, b, av)
		w.nestedObject(p, e, b.Attributes, b.Blocks, b.Validators, av, tv)
	default:
		w.ok = false
		return
	}
	if msg := b.GetDeprecationMessage(); msg != "" && !av.IsNull() && !av.IsUnknown() {
		w.diags.AddAttributeWarning(p, "Block Deprecated", msg)
	}
}

// elements validates each object of the list (or set) attribute value av at p.
func (w *schemaWalk) elements(p path.Path, e path.Expression, attrs map[string]schema.Attribute, validators []validator.Object, av attr.Value, tv tftypes.Value, set bool) {
	var objects []attr.Value
	if set {
		s, ok := av.(basetypes.SetValuable)
		if !ok {
			w.ok = false
			return
		}
		v, diags := s.ToSetValue(w.ctx)
		if diags.HasError() {
			w.ok = false
			return
		}
		objects = v.Elements()
	} else {
		l, ok := av.(basetypes.ListValuable)
		if !ok {
			w.ok = false
			return
		}
		v, diags := l.ToListValue(w.ctx)
		if diags.HasError() {
			w.ok = false
			return
		}
		objects = v.Elements()
	}
	elems := listElements(tv)
	if len(elems) != len(objects) {
		if len(objects) > 0 {
			w.ok = false
		}
		return
	}
	for i, ov := range objects {
		ep, ee := p.AtListIndex(i), e.AtListIndex(i)
		if set {
			ep, ee = p.AtSetValue(ov), e.AtSetValue(ov)
		}
		w.nestedObject(ep, ee, attrs, nil, validators, ov, elems[i])
	}
}

// mapElements validates each object of the map attribute value av at p.
func (w *schemaWalk) mapElements(p path.Path, e path.Expression, attrs map[string]schema.Attribute, validators []validator.Object, av attr.Value, tv tftypes.Value) {
	m, ok := av.(basetypes.MapValuable)
	if !ok {
		w.ok = false
		return
	}
	v, diags := m.ToMapValue(w.ctx)
	if diags.HasError() {
		w.ok = false
		return
	}
	var elems map[string]tftypes.Value
	if len(v.Elements()) > 0 {
		if err := tv.As(&elems); err != nil {
			w.ok = false
			return
		}
	}
	for key, ov := range v.Elements() {
		w.nestedObject(p.AtMapKey(key), e.AtMapKey(key), attrs, nil, validators, ov, elems[key])
	}
}

// nestedObject runs the object validators on the object av at p, then walks its attributes and
// blocks.
func (w *schemaWalk) nestedObject(p path.Path, e path.Expression, attrs map[string]schema.Attribute, blocks map[string]schema.Block,
	validators []validator.Object, av attr.Value, tv tftypes.Value) {
	o, ok := av.(basetypes.ObjectValuable)
	if !ok {
		w.ok = false
		return
	}
	object, diags := o.ToObjectValue(w.ctx)
	w.diags.Append(diags...)
	if diags.HasError() {
		return
	}
	req := validator.ObjectRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: object, Path: p, PathExpression: e}
	for _, v := range validators {
		resp := &validator.ObjectResponse{}
		v.ValidateObject(w.ctx, req, resp)
		w.diags.Append(resp.Diagnostics...)
	}
	w.object(p, e, attrs, blocks, tv)
}

// listElements are the elements of the list or set tv, none when it is null or unknown.
func listElements(tv tftypes.Value) []tftypes.Value {
	var elems []tftypes.Value
	if tv.IsKnown() && !tv.IsNull() {
		_ = tv.As(&elems)
	}
	return elems
}

// validators runs the validators of the attribute or block s on its value av at p, as the
// framework runs those of its kind.
func (w *schemaWalk) validators(p path.Path, e path.Expression, s any, av attr.Value) {
	var diags diag.Diagnostics
	var ok bool // false for a kind of attribute not known here
	switch s := s.(type) {
	case interface{ StringValidators() []validator.String }:
		diags, ok = runValidators(w.ctx, av, basetypes.StringValuable.ToStringValue, s.StringValidators(), func(v validator.String, value basetypes.StringValue) diag.Diagnostics {
			resp := &validator.StringResponse{}
			v.ValidateString(w.ctx, validator.StringRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case interface{ BoolValidators() []validator.Bool }:
		diags, ok = runValidators(w.ctx, av, basetypes.BoolValuable.ToBoolValue, s.BoolValidators(), func(v validator.Bool, value basetypes.BoolValue) diag.Diagnostics {
			resp := &validator.BoolResponse{}
			v.ValidateBool(w.ctx, validator.BoolRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case interface{ Int64Validators() []validator.Int64 }:
		diags, ok = runValidators(w.ctx, av, basetypes.Int64Valuable.ToInt64Value, s.Int64Validators(), func(v validator.Int64, value basetypes.Int64Value) diag.Diagnostics {
			resp := &validator.Int64Response{}
			v.ValidateInt64(w.ctx, validator.Int64Request{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case interface{ NumberValidators() []validator.Number }:
		diags, ok = runValidators(w.ctx, av, basetypes.NumberValuable.ToNumberValue, s.NumberValidators(), func(v validator.Number, value basetypes.NumberValue) diag.Diagnostics {
			resp := &validator.NumberResponse{}
			v.ValidateNumber(w.ctx, validator.NumberRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case interface{ ListValidators() []validator.List }:
		diags, ok = runValidators(w.ctx, av, basetypes.ListValuable.ToListValue, s.ListValidators(), func(v validator.List, value basetypes.ListValue) diag.Diagnostics {
			resp := &validator.ListResponse{}
			v.ValidateList(w.ctx, validator.ListRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case interface{ MapValidators() []validator.Map }:
		diags, ok = runValidators(w.ctx, av, basetypes.MapValuable.ToMapValue, s.MapValidators(), func(v validator.Map, value basetypes.MapValue) diag.Diagnostics {
			resp := &validator.MapResponse{}
			v.ValidateMap(w.ctx, validator.MapRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case interface{ ObjectValidators() []validator.Object }:
		diags, ok = runValidators(w.ctx, av, basetypes.ObjectValuable.ToObjectValue, s.ObjectValidators(), func(v validator.Object, value basetypes.ObjectValue) diag.Diagnostics {
			resp := &validator.ObjectResponse{}
			v.ValidateObject(w.ctx, validator.ObjectRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case interface{ SetValidators() []validator.Set }:
		diags, ok = runValidators(w.ctx, av, basetypes.SetValuable.ToSetValue, s.SetValidators(), func(v validator.Set, value basetypes.SetValue) diag.Diagnostics {
			resp := &validator.SetResponse{}
			v.ValidateSet(w.ctx, validator.SetRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: value, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	}
	if !ok {
		w.ok = false
		return
	}
	w.diags.Append(diags...)
}

// runValidators runs each of validators on av converted by to into the value they take, and
// gives their diagnostics; ok is false when av is not of that kind.
func runValidators[Valuable, Value, Validator any](ctx context.Context, av attr.Value, to func(Valuable, context.Context) (Value, diag.Diagnostics),
	validators []Validator, run func(Validator, Value) diag.Diagnostics) (diags diag.Diagnostics, ok bool) {
	valuable, ok := av.(Valuable)
	if !ok {
		return nil, false
	}
	value, diags := to(valuable, ctx)
	if diags.HasError() {
		return diags, true
	}
	for _, v := range validators {
		diags.Append(run(v, value)...)
	}
	return diags, true
}
