package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Every job resource has its refreshes, stored states and configurations answered apart from
// the framework's walks: a type with semantic equality or a block the shortcut does not walk, added to a job's
// schema, fails here, not in a refresh that is suddenly slow.
func TestEveryJobResourceHasItsRefreshesAnsweredWithoutTheFrameworksWalks(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	shapes, reads, validates := planShapes(ctx, p)
	if len(shapes) < 5 {
		t.Fatalf("only %d job resources with a plan shape", len(shapes))
	}
	for name, shape := range shapes {
		r := newResourceNamed(ctx, p, name)
		read, err := readShapeOf(ctx, r, shape.schema)
		if reads[name] == nil {
			t.Errorf("%s: refreshes left to the framework: %v", name, err)
			continue
		}
		if validates[name] == nil {
			_, err := validateShapeOf(ctx, r, shape.schema, read.blocks)
			t.Errorf("%s: configurations validated by the framework: %v", name, err)
		}
	}
}

// A stored state of the schema's version is decoded as the framework decodes it: the same
// state, with the attributes it lacks null and its null list blocks empty. Another version goes
// to the framework's upgraders.
func TestAStoredJobStateIsDecodedAsTheFrameworkDecodesIt(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	framework := providerserver.NewProtocol6(p)()
	if _, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	_, reads, _ := planShapes(ctx, p)
	for name, shape := range reads {
		full := as[map[string]any](t, jsonOf(sample(shape.state, 0)))
		states := map[string]map[string]any{"every attribute set": full}
		for block, b := range shape.blocks {
			if b.list {
				states[block+" null"] = withKey(full, block, nil)
				states[block+" absent"] = withKey(full, block, absent{})
			}
		}
		states["name absent"] = withKey(full, "name", absent{})
		states["an attribute the schema has not"] = withKey(full, "dropped_since", "x")
		for attr, at := range as[tftypes.Object](t, shape.state).AttributeTypes {
			switch {
			case at.Is(tftypes.Number):
				states[attr+" a string"] = withKey(full, attr, "3")
				states[attr+" beyond a float64"] = withKey(full, attr, json.Number("9007199254740993"))
			case at.Is(tftypes.Bool):
				states[attr+" a string"] = withKey(full, attr, "true")
			case at.Is(tftypes.String):
				states[attr+" a number"] = withKey(full, attr, json.Number("12"))
			}
		}
		for what, state := range states {
			raw, err := json.Marshal(state)
			if err != nil {
				t.Fatal(err)
			}
			req := &tfprotov6.UpgradeResourceStateRequest{TypeName: name, Version: shape.schema.Version, RawState: &tfprotov6.RawState{JSON: raw}}
			want, err := framework.UpgradeResourceState(ctx, req)
			if err != nil || len(want.Diagnostics) > 0 {
				t.Fatalf("%s, %s: the framework: %v %v", name, what, err, want.Diagnostics)
			}
			got, ok := shape.upgrade(req)
			if !ok {
				t.Errorf("%s, %s: left to the framework", name, what)
				continue
			}
			w, err := want.UpgradedState.Unmarshal(shape.state)
			if err != nil {
				t.Fatal(err)
			}
			g, err := got.UpgradedState.Unmarshal(shape.state)
			if err != nil {
				t.Fatal(err)
			}
			if !w.Equal(g) {
				t.Errorf("%s, %s: decoded otherwise than the framework: %v differ", name, what, changed(w, g))
			}
		}
		if _, ok := shape.upgrade(&tfprotov6.UpgradeResourceStateRequest{TypeName: name, Version: shape.schema.Version - 1, RawState: &tfprotov6.RawState{JSON: []byte("{}")}}); ok {
			t.Errorf("%s: a state of version %d decoded without the framework's upgrader", name, shape.schema.Version-1)
		}
	}
}

// A refresh that cannot read the cluster (the provider's settings are unknown until apply) is
// answered as the framework answers it: the state as it was, its null list blocks empty, the
// identity, and the warning. The refreshes that read a cluster are compared in
// TestAccDirectRead_answersEveryJobsRefreshAsTheFrameworkDoes.
func TestARefreshIsAnsweredAsTheFrameworkAnswersIt(t *testing.T) {
	ctx := context.Background()
	framework := providerserver.NewProtocol6(New("test")())()
	short := newShortcuts("test")
	for _, s := range []tfprotov6.ProviderServer{framework, short} {
		configureProvider(t, s, map[string]tftypes.Value{"host": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)})
	}
	_, reads, _ := planShapes(ctx, New("test")())
	for name, shape := range reads {
		full := sample(shape.state, 0)
		states := map[string]tftypes.Value{"every attribute set": full}
		for block, b := range shape.blocks {
			if b.list {
				states[block+" null"] = withAttribute(full, block, tftypes.NewValue(attributes(full)[block].Type(), nil))
			}
		}
		identity := sample(shape.identityTyp, 0)
		for what, state := range states {
			for _, id := range []*tftypes.Value{nil, &identity} {
				req := readRequest(t, name, shape, state, id)
				want, err := framework.ReadResource(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				got, err := short.ReadResource(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := short.reads[name].read(ctx, short.resourceData(), req); !ok {
					t.Errorf("%s, %s: left to the framework", name, what)
				}
				compareReads(t, name+", "+what, shape, want, got)
			}
		}
	}
}

// compareReads fails the test where got answers otherwise than want, the framework's answer.
func compareReads(t *testing.T, what string, shape *readShape, want, got *tfprotov6.ReadResourceResponse) {
	t.Helper()
	for _, d := range readDifferences(t, shape, want, got) {
		t.Errorf("%s: %s", what, d)
	}
}

// readDifferences says how the shortcut's read got differs from the framework's want: its new
// state, its new identity, its diagnostics, its private state or deferral; none when alike.
func readDifferences(t *testing.T, shape *readShape, want, got *tfprotov6.ReadResourceResponse) []string {
	t.Helper()
	var out []string
	if diff := cmp.Diff(decoded(t, shape.state, want.NewState), decoded(t, shape.state, got.NewState)); diff != "" {
		out = append(out, "a new state otherwise than the framework's (-framework +shortcut):\n"+diff)
	}
	var wantID, gotID *tfprotov6.DynamicValue
	if want.NewIdentity != nil {
		wantID = want.NewIdentity.IdentityData
	}
	if got.NewIdentity != nil {
		gotID = got.NewIdentity.IdentityData
	}
	if diff := cmp.Diff(decoded(t, shape.identityTyp, wantID), decoded(t, shape.identityTyp, gotID)); diff != "" {
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

// configureProvider configures the provider server s with the provider settings set, every other
// one null.
func configureProvider(t *testing.T, s tfprotov6.ProviderServer, set map[string]tftypes.Value) {
	t.Helper()
	ctx := context.Background()
	schemas, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := as[tftypes.Object](t, schemas.Provider.ValueType())
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

// readRequest is Terraform's refresh of state, with identity unless nil (Terraform before 1.12).
func readRequest(t *testing.T, typeName string, shape *readShape, state tftypes.Value, identity *tftypes.Value) *tfprotov6.ReadResourceRequest {
	t.Helper()
	current, err := tfprotov6.NewDynamicValue(shape.state, state)
	if err != nil {
		t.Fatal(err)
	}
	req := &tfprotov6.ReadResourceRequest{TypeName: typeName, CurrentState: &current}
	if identity != nil {
		id, err := tfprotov6.NewDynamicValue(shape.identityTyp, *identity)
		if err != nil {
			t.Fatal(err)
		}
		req.CurrentIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &id}
	}
	return req
}

// decoded is the value d holds, as a string for cmp (nil: "<none>").
func decoded(t *testing.T, typ tftypes.Type, d *tfprotov6.DynamicValue) string {
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

// absent marks a key that withKey removes.
type absent struct{}

// withKey is a copy of m with key set to v, or removed for absent.
func withKey(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m))
	for k, val := range m {
		out[k] = val
	}
	if _, remove := v.(absent); remove {
		delete(out, key)
	} else {
		out[key] = v
	}
	return out
}

// jsonOf is v as Terraform stores it in a state file's attributes.
func jsonOf(v tftypes.Value) any {
	if v.IsNull() {
		return nil
	}
	switch typ := v.Type().(type) {
	case tftypes.List, tftypes.Set:
		var elems []tftypes.Value
		_ = v.As(&elems)
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = jsonOf(e)
		}
		return out
	case tftypes.Map, tftypes.Object:
		var vals map[string]tftypes.Value
		_ = v.As(&vals)
		out := map[string]any{}
		for k, e := range vals {
			out[k] = jsonOf(e)
		}
		return out
	default:
		switch {
		case typ.Is(tftypes.String):
			var s string
			_ = v.As(&s)
			return s
		case typ.Is(tftypes.Bool):
			var b bool
			_ = v.As(&b)
			return b
		case typ.Is(tftypes.Number):
			n := new(big.Float)
			_ = v.As(&n)
			f, _ := n.Float64()
			return f
		}
	}
	return nil
}

// newResourceNamed is the factory of p's resource type name.
func newResourceNamed(ctx context.Context, p provider.Provider, name string) func() resource.Resource {
	for _, f := range p.Resources(ctx) {
		var meta resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: providerTypeName}, &meta)
		if meta.TypeName == name {
			return f
		}
	}
	return nil
}

// as is v as a T, or the test fails.
func as[T any](t testing.TB, v any) T {
	t.Helper()
	x, ok := v.(T)
	if !ok {
		t.Fatalf("a %T where a %T was expected", v, x)
	}
	return x
}
