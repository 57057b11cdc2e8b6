package shortcuts

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	training "github.com/kubetrain/terraform-provider-training/internal/provider"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// Every job resource has its refreshes, stored states and configurations answered apart from
// the framework's walks: a type with semantic equality or a block the shortcut does not walk, added to a job's
// schema, fails here, not in a refresh that is suddenly slow.
func TestEveryJobResourceHasItsRefreshesAnsweredWithoutTheFrameworksWalks(t *testing.T) {
	ctx := context.Background()
	p := training.New("test")()
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
	p := training.New("test")()
	framework := providerserver.NewProtocol6(p)()
	if _, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	_, reads, _ := planShapes(ctx, p)
	for name, shape := range reads {
		full := shortcutstest.As[map[string]any](t, jsonOf(stored(shortcutstest.Sample(shape.state, 0), shape.writeOnly)))
		states := map[string]map[string]any{"every attribute set": full}
		for block, b := range shape.blocks {
			if b.list {
				states[block+" null"] = withKey(full, block, nil)
				states[block+" absent"] = withKey(full, block, absent{})
			}
		}
		states["name absent"] = withKey(full, "name", absent{})
		states["an attribute the schema has not"] = withKey(full, "dropped_since", "x")
		for attr, at := range shortcutstest.As[tftypes.Object](t, shape.state).AttributeTypes {
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
				t.Errorf("%s, %s: decoded otherwise than the framework: %v differ", name, what, shortcutstest.Changed(w, g))
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
	framework := providerserver.NewProtocol6(training.New("test")())()
	short := newServer(training.New("test")())
	for _, s := range []tfprotov6.ProviderServer{framework, short} {
		shortcutstest.ConfigureProvider(t, s, map[string]tftypes.Value{"host": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)})
	}
	_, reads, _ := planShapes(ctx, training.New("test")())
	for name, shape := range reads {
		full := stored(shortcutstest.Sample(shape.state, 0), shape.writeOnly)
		states := map[string]tftypes.Value{"every attribute set": full}
		for block, b := range shape.blocks {
			if b.list {
				states[block+" null"] = shortcutstest.WithAttribute(full, block, tftypes.NewValue(shortcutstest.Attributes(full)[block].Type(), nil))
			}
		}
		identity := shortcutstest.Sample(shape.identityTyp, 0)
		for what, state := range states {
			for _, id := range []*tftypes.Value{nil, &identity} {
				req := shortcutstest.ReadRequest(t, name, typesOf(shape), state, id)
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
				shortcutstest.CompareReads(t, name+", "+what, typesOf(shape), want, got)
			}
		}
		// A state that holds a write-only value (Terraform never stores one) is the framework's
		// to answer: it nulls the value.
		if len(shape.writeOnly) > 0 {
			held := shortcutstest.Sample(shape.state, 0)
			req := shortcutstest.ReadRequest(t, name, typesOf(shape), held, nil)
			if _, ok := short.reads[name].read(ctx, short.resourceData(), req); ok {
				t.Errorf("%s: a refresh of a state holding a write-only value is answered apart from the framework", name)
			}
			if _, ok := short.shapes[name].plan(ctx, &tfprotov6.PlanResourceChangeRequest{PriorState: req.CurrentState, ProposedNewState: req.CurrentState, Config: req.CurrentState}); ok {
				t.Errorf("%s: the plan of a state holding a write-only value is answered apart from the framework", name)
			}
		}
	}
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
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "training"}, &meta)
		if meta.TypeName == name {
			return f
		}
	}
	return nil
}

// typesOf are the state and identity types of a read shape.
func typesOf(s *readShape) shortcutstest.Types {
	return shortcutstest.Types{State: s.state, Identity: s.identityTyp}
}

// stored is the sampled state v as Terraform stores it: its write-only attributes null.
func stored(v tftypes.Value, writeOnly []string) tftypes.Value {
	for _, name := range writeOnly {
		v = shortcutstest.WithAttribute(v, name, tftypes.NewValue(shortcutstest.Attributes(v)[name].Type(), nil))
	}
	return v
}
