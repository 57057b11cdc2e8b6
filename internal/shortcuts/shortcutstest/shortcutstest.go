// Package shortcutstest holds what the tests of internal/shortcuts and of the provider use to
// build Terraform's requests and compare a shortcut's answers with the framework's.
package shortcutstest

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// WithAttribute is the object o with its attribute name set to v.
func WithAttribute(o tftypes.Value, name string, v tftypes.Value) tftypes.Value {
	vals := Attributes(o)
	vals[name] = v
	return tftypes.NewValue(o.Type(), vals)
}

// Attributes is a copy of the object o's attributes (As gives the value's own map).
func Attributes(o tftypes.Value) map[string]tftypes.Value {
	var in map[string]tftypes.Value
	if err := o.As(&in); err != nil {
		panic(err)
	}
	return maps.Clone(in)
}

// As is v as a T, or the test fails.
func As[T any](t testing.TB, v any) T {
	t.Helper()
	x, ok := v.(T)
	if !ok {
		t.Fatalf("a %T where a %T was expected", v, x)
	}
	return x
}

// ConfigureProvider configures the provider server s with the provider settings set, every
// other one null.
func ConfigureProvider(t testing.TB, s tfprotov6.ProviderServer, set map[string]tftypes.Value) {
	t.Helper()
	ctx := context.Background()
	schemas, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := As[tftypes.Object](t, schemas.Provider.ValueType())
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	maps.Copy(vals, set)
	config, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &config})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("configuring the provider: %v %v", err, resp.Diagnostics)
	}
}

// Types are a resource's state and identity types.
type Types struct{ State, Identity tftypes.Type }

// ReadRequest is Terraform's refresh of state, with identity unless nil (Terraform before 1.12).
func ReadRequest(t testing.TB, typeName string, types Types, state tftypes.Value, identity *tftypes.Value) *tfprotov6.ReadResourceRequest {
	t.Helper()
	current, err := tfprotov6.NewDynamicValue(types.State, state)
	if err != nil {
		t.Fatal(err)
	}
	req := &tfprotov6.ReadResourceRequest{TypeName: typeName, CurrentState: &current}
	if identity != nil {
		id, err := tfprotov6.NewDynamicValue(types.Identity, *identity)
		if err != nil {
			t.Fatal(err)
		}
		req.CurrentIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &id}
	}
	return req
}

// ReadDifferences says how the shortcut's read got differs from the framework's want: its new
// state, its new identity, its diagnostics, its private state or deferral; none when alike.
func ReadDifferences(t testing.TB, types Types, want, got *tfprotov6.ReadResourceResponse) []string {
	t.Helper()
	var out []string
	if diff := cmp.Diff(Decoded(t, types.State, want.NewState), Decoded(t, types.State, got.NewState)); diff != "" {
		out = append(out, "a new state otherwise than the framework's (-framework +shortcut):\n"+diff)
	}
	var wantID, gotID *tfprotov6.DynamicValue
	if want.NewIdentity != nil {
		wantID = want.NewIdentity.IdentityData
	}
	if got.NewIdentity != nil {
		gotID = got.NewIdentity.IdentityData
	}
	if diff := cmp.Diff(Decoded(t, types.Identity, wantID), Decoded(t, types.Identity, gotID)); diff != "" {
		out = append(out, "a new identity otherwise than the framework's (-framework +shortcut):\n"+diff)
	}
	if diff := cmp.Diff(want.Diagnostics, got.Diagnostics); diff != "" {
		out = append(out, "diagnostics otherwise than the framework's (-framework +shortcut):\n"+diff)
	}
	if string(want.Private) != string(got.Private) || (want.Deferred == nil) != (got.Deferred == nil) {
		out = append(out, fmt.Sprintf("private state %q or deferral %v, the framework's %q and %v", got.Private, got.Deferred, want.Private, want.Deferred))
	}
	return out
}

// CompareReads fails the test where got answers otherwise than want, the framework's answer.
func CompareReads(t testing.TB, what string, types Types, want, got *tfprotov6.ReadResourceResponse) {
	t.Helper()
	for _, d := range ReadDifferences(t, types, want, got) {
		t.Errorf("%s: %s", what, d)
	}
}

// Decoded is the value d holds, as a string for cmp (nil: "<none>").
func Decoded(t testing.TB, typ tftypes.Type, d *tfprotov6.DynamicValue) string {
	t.Helper()
	if d == nil {
		return "<none>"
	}
	v, err := d.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return v.String()
}

// Sample is a value of typ; variant tells two apart.
func Sample(typ tftypes.Type, variant int) tftypes.Value {
	switch typ := typ.(type) {
	case tftypes.List:
		return tftypes.NewValue(typ, []tftypes.Value{Sample(typ.ElementType, variant)})
	case tftypes.Set:
		return tftypes.NewValue(typ, []tftypes.Value{Sample(typ.ElementType, variant)})
	case tftypes.Map:
		return tftypes.NewValue(typ, map[string]tftypes.Value{"key": Sample(typ.ElementType, variant)})
	case tftypes.Object:
		vals := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			vals[name] = Sample(at, variant)
		}
		return tftypes.NewValue(typ, vals)
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, []string{"sample", "other"}[variant])
	case typ.Is(tftypes.Number):
		return tftypes.NewValue(typ, 3+variant)
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, variant == 0)
	}
	return tftypes.NewValue(typ, nil)
}

// Changed names the attributes of the objects a and b that differ.
func Changed(a, b tftypes.Value) []string {
	av, bv := Attributes(a), Attributes(b)
	var names []string
	for name, v := range av {
		if !v.Equal(bv[name]) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
