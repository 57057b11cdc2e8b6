package provider

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The framework's tfsdk Get and Set convert a model by reflection anew on every call, and find
// each struct's fields by compiling a regular expression for each of them: a refresh of 100 jobs
// did that for each job's 60-odd fields twice, a tenth of the provider's CPU. getModel and
// setModel convert the same models, the attributes' values with their types' own conversions,
// with each model type's fields found once (modelCodec). They take what the job models hold:
// attribute values (types.String, types.List, timeouts.Value, ...), single nested attributes as
// pointers to structs (nil for null), and blocks as slices of structs, embedded structs included.

// getModel sets the model m points to from the state, as state.Get does.
func getModel(ctx context.Context, state tfsdk.State, m any) diag.Diagnostics {
	return decodeModel(ctx, state.Raw, state.Schema.Type, m, "Reading the state")
}

// getPlanModel sets the model m points to from the plan, as plan.Get does: an unknown value is
// read into an attribute value as unknown, and refused where a block's slice would hold it.
func getPlanModel(ctx context.Context, plan tfsdk.Plan, m any) diag.Diagnostics {
	return decodeModel(ctx, plan.Raw, plan.Schema.Type, m, "Reading the plan")
}

// decodeModel sets the model m points to from v, of the type typeOf gives; what says what was
// read, in the error.
func decodeModel(ctx context.Context, v tftypes.Value, typeOf func() attr.Type, m any, what string) diag.Diagnostics {
	c, err := codecOf(ctx, reflect.TypeOf(m), typeOf)
	if err == nil {
		err = c.decode(ctx, v, reflect.ValueOf(m).Elem())
	}
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Value Conversion Error", what+": "+err.Error()+"\n\nPlease report this issue to the provider developers.")}
	}
	return nil
}

// setModel sets the state from the model m points to, as state.Set does.
func setModel(ctx context.Context, state *tfsdk.State, m any) diag.Diagnostics {
	c, err := codecOf(ctx, reflect.TypeOf(m), state.Schema.Type)
	var v tftypes.Value
	if err == nil {
		v, err = c.encode(ctx, reflect.ValueOf(m).Elem())
	}
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Value Conversion Error", "Writing the state: "+err.Error()+"\n\nPlease report this issue to the provider developers.")}
	}
	state.Raw = v
	return nil
}

// A modelCodec converts an object value of one attribute type to and from one struct type.
type modelCodec struct {
	tf     tftypes.Object
	fields []codecField
}

// codecField is an attribute and the struct field that holds it.
type codecField struct {
	name  string
	index []int
	typ   attr.Type
	// elems is the codec of a block's objects, for a field that is a slice of structs, or of a
	// single nested attribute's object, for a pointer to a struct (single); nil for an attribute
	// value.
	elems  *modelCodec
	single bool
}

var (
	attrValue = reflect.TypeFor[attr.Value]()
	// codecs are the codecs made, by model pointer type.
	codecs sync.Map
)

// codecOf is the codec of the model type ptr (a pointer to a struct), made once from the
// attribute type typeOf gives.
func codecOf(ctx context.Context, ptr reflect.Type, typeOf func() attr.Type) (*modelCodec, error) {
	if c, ok := codecs.Load(ptr); ok {
		if codec, ok := c.(*modelCodec); ok {
			return codec, nil
		}
	}
	if ptr.Kind() != reflect.Pointer || ptr.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a pointer to a struct", ptr)
	}
	c, err := newCodec(ctx, ptr.Elem(), typeOf())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ptr.Elem(), err)
	}
	codecs.Store(ptr, c)
	return c, nil
}

func newCodec(ctx context.Context, t reflect.Type, typ attr.Type) (*modelCodec, error) {
	object, ok := typ.(attr.TypeWithAttributeTypes)
	if !ok {
		return nil, fmt.Errorf("%s is not an object type", typ)
	}
	tf, ok := typ.TerraformType(ctx).(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object type", typ)
	}
	fields := map[string][]int{}
	if err := tagged(t, nil, fields); err != nil {
		return nil, err
	}
	c := &modelCodec{tf: tf}
	for name, at := range object.AttributeTypes() {
		index, ok := fields[name]
		if !ok {
			return nil, fmt.Errorf("no field holds the attribute %s", name)
		}
		delete(fields, name)
		f := codecField{name: name, index: index, typ: at}
		ft := t.FieldByIndex(index).Type
		switch {
		case ft.Implements(attrValue):
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			list, ok := at.(attr.TypeWithElementType)
			if !ok {
				return nil, fmt.Errorf("%s: a %s holds a %s", name, ft, at)
			}
			elems, err := newCodec(ctx, ft.Elem(), list.ElementType())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			f.elems = elems
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			elems, err := newCodec(ctx, ft.Elem(), at)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			f.elems, f.single = elems, true
		default:
			return nil, fmt.Errorf("%s: a field of type %s is not converted here", name, ft)
		}
		c.fields = append(c.fields, f)
	}
	// A field of an attribute this schema lacks (a shared model's field a kind does not take:
	// a TrainJob has no pod_patch) is left as its zero value, a null.
	return c, nil
}

// tagged adds the tfsdk-tagged fields of the struct type t (those of its embedded structs
// too) to fields, by attribute name, each with its index from the outer struct (at).
func tagged(t reflect.Type, at []int, fields map[string][]int) error {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), at...), i)
		tag, ok := f.Tag.Lookup("tfsdk")
		switch {
		case tag == "-":
		case f.Anonymous && !ok:
			if f.Type.Kind() != reflect.Struct {
				return fmt.Errorf("the embedded %s is not a struct", f.Type)
			}
			if err := tagged(f.Type, index, fields); err != nil {
				return err
			}
		case !f.IsExported():
		case !ok:
			return fmt.Errorf("the field %s has no tfsdk tag", f.Name)
		default:
			if _, twice := fields[tag]; twice {
				return fmt.Errorf("two fields hold the attribute %s", tag)
			}
			fields[tag] = index
		}
	}
	return nil
}

// decode sets the struct dst from the object v.
func (c *modelCodec) decode(ctx context.Context, v tftypes.Value, dst reflect.Value) error {
	if !v.IsKnown() || v.IsNull() {
		return fmt.Errorf("a null or unknown object cannot be read into %s", dst.Type())
	}
	var vals map[string]tftypes.Value
	if err := v.As(&vals); err != nil {
		return err
	}
	for _, f := range c.fields {
		tv, ok := vals[f.name]
		if !ok {
			return fmt.Errorf("the object has no attribute %s", f.name)
		}
		if err := f.decode(ctx, tv, dst.FieldByIndex(f.index)); err != nil {
			return err
		}
	}
	return nil
}

// decode sets the struct field that holds the attribute from its value tv.
func (f codecField) decode(ctx context.Context, tv tftypes.Value, field reflect.Value) error {
	if f.elems == nil {
		av, err := f.typ.ValueFromTerraform(ctx, tv)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		rv := reflect.ValueOf(av)
		if !rv.Type().AssignableTo(field.Type()) {
			return fmt.Errorf("%s: a %s cannot hold a %s", f.name, field.Type(), rv.Type())
		}
		field.Set(rv)
		return nil
	}
	switch {
	case !tv.IsKnown():
		return fmt.Errorf("%s: an unknown value cannot be read into %s", f.name, field.Type())
	case tv.IsNull():
		field.SetZero()
		return nil
	case f.single:
		object := reflect.New(field.Type().Elem())
		if err := f.elems.decode(ctx, tv, object.Elem()); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		field.Set(object)
		return nil
	}
	var elems []tftypes.Value
	if err := tv.As(&elems); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	s := reflect.MakeSlice(field.Type(), len(elems), len(elems))
	for i, e := range elems {
		if err := f.elems.decode(ctx, e, s.Index(i)); err != nil {
			return fmt.Errorf("%s[%d]: %w", f.name, i, err)
		}
	}
	field.Set(s)
	return nil
}

// withAttributes is a copy of the model prior points to (read by decodeModel from a value of the
// type typeOf gives) with the attributes vals decoded into it: the model of that value with those
// attributes changed, without decoding the others again.
func withAttributes(ctx context.Context, prior any, typeOf func() attr.Type, vals map[string]tftypes.Value) (any, error) {
	c, err := codecOf(ctx, reflect.TypeOf(prior), typeOf)
	if err != nil {
		return nil, err
	}
	out := reflect.New(reflect.TypeOf(prior).Elem())
	out.Elem().Set(reflect.ValueOf(prior).Elem())
	for name, tv := range vals {
		i := slices.IndexFunc(c.fields, func(f codecField) bool { return f.name == name })
		if i < 0 {
			return nil, fmt.Errorf("the object has no attribute %s", name)
		}
		if err := c.fields[i].decode(ctx, tv, out.Elem().FieldByIndex(c.fields[i].index)); err != nil {
			return nil, err
		}
	}
	return out.Interface(), nil
}

// encode is the object the struct src holds.
func (c *modelCodec) encode(ctx context.Context, src reflect.Value) (tftypes.Value, error) {
	vals := make(map[string]tftypes.Value, len(c.fields))
	for _, f := range c.fields {
		field := src.FieldByIndex(f.index)
		want := c.tf.AttributeTypes[f.name]
		if f.elems == nil {
			av, ok := field.Interface().(attr.Value)
			if !ok {
				return tftypes.Value{}, fmt.Errorf("%s: a %s is not an attribute value", f.name, field.Type())
			}
			tv, err := av.ToTerraformValue(ctx)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", f.name, err)
			}
			if !tv.Type().Equal(want) {
				return tftypes.Value{}, fmt.Errorf("%s: a value of type %s where the schema says %s", f.name, tv.Type(), want)
			}
			vals[f.name] = tv
			continue
		}
		if field.IsNil() {
			vals[f.name] = tftypes.NewValue(want, nil)
			continue
		}
		if f.single {
			object, err := f.elems.encode(ctx, field.Elem())
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", f.name, err)
			}
			vals[f.name] = object
			continue
		}
		elems := make([]tftypes.Value, field.Len())
		for i := range elems {
			e, err := f.elems.encode(ctx, field.Index(i))
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s[%d]: %w", f.name, i, err)
			}
			elems[i] = e
		}
		vals[f.name] = tftypes.NewValue(want, elems)
	}
	return tftypes.NewValue(c.tf, vals), nil
}
