package shortcuts

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	training "github.com/kubetrain/terraform-provider-training/internal/provider"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// Every job resource (each registered kind's and the TrainJob's) has its unchanged plans
// answered at once: a plan modifier or default added to a job's schema that the shortcut does
// not understand fails here, not in a plan that is suddenly slow.
func TestEveryJobResourceHasItsUnchangedPlansAnsweredWithoutTheFrameworksWalk(t *testing.T) {
	ctx := context.Background()
	jobsSeen := 0
	for _, f := range training.New("test")().Resources(ctx) {
		name, shape, err := shapeOf(ctx, "training", f())
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if strings.HasSuffix(name, "_job") {
			jobsSeen++
			if shape == nil {
				t.Errorf("%s does not keep unchanged plans (keepsUnchangedPlans)", name)
			}
		}
	}
	if jobsSeen < 5 {
		t.Fatalf("only %d job resources seen", jobsSeen)
	}
}

// The shortcut answers exactly what the framework would, and answers whenever the framework
// plans no change: for every job resource's unchanged plan with every optional attribute set,
// and with each defaulted attribute (at the top or in a list's objects) left unset while the
// state holds its default or another value (there the framework plans the default: a change
// the shortcut must leave to it). The plan modifiers that may change an unchanged plan (an
// elastic job's dependents) are run by the shortcut: a state whose dependents are not the ones
// the configuration wants plans a change.
func TestAnUnchangedJobIsPlannedAsTheFrameworkPlansIt(t *testing.T) {
	ctx := context.Background()
	p := training.New("test")()
	framework := providerserver.NewProtocol6(p)()
	if _, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Resources(ctx) {
		r := f()
		name, shape, err := shapeOf(ctx, "training", r)
		if err != nil || shape == nil {
			continue
		}
		var sch resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sch)

		// plan plans config from state both ways; it fails the test if the shortcut answers
		// otherwise than the framework or, where complete, leaves to it a plan of no change, and
		// says whether the framework planned a change.
		plan := func(what string, complete bool, config, state tftypes.Value) (changes bool, planned tftypes.Value) {
			t.Helper()
			req := planRequest(t, name, shape.state, config, state)
			fw, err := framework.PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, what, err)
			}
			for _, d := range fw.Diagnostics {
				if d.Severity == tfprotov6.DiagnosticSeverityError {
					t.Fatalf("%s, %s: the framework: %s: %s", name, what, d.Summary, d.Detail)
				}
			}
			planned, err = fw.PlannedState.Unmarshal(shape.state)
			if err != nil {
				t.Fatal(err)
			}
			changes = !planned.Equal(state) || len(fw.RequiresReplace) > 0
			short, ok := shape.plan(ctx, req)
			switch {
			case ok && changes:
				t.Errorf("%s, %s: answered at once, but the framework changes %v (replace %v)", name, what, shortcutstest.Changed(state, planned), fw.RequiresReplace)
			case ok:
				if got, err := short.PlannedState.Unmarshal(shape.state); err != nil || !got.Equal(planned) {
					t.Errorf("%s, %s: answered otherwise than the framework (%v)", name, what, err)
				}
			case !changes && complete:
				t.Errorf("%s, %s: left to the framework, which plans no change", name, what)
			}
			return changes, planned
		}

		// A state the configuration plans unchanged: a sample of every attribute, with what the
		// framework plans known in place of the sample's (the dependents the name wants).
		sampled := stored(shortcutstest.Sample(shape.state, 0), shape.writeOnly)
		config := configOf(sch.Schema.Attributes, sch.Schema.Blocks, sampled)
		_, planned := plan("a sampled state", false, config, sampled)
		state := knownOf(sampled, planned)
		if changes, _ := plan("every optional attribute set", true, config, state); changes {
			t.Fatalf("%s: the framework plans a change of its own plan: %v", name, shortcutstest.Changed(state, planned))
		}

		for attr, d := range shape.defaults {
			if d.value != nil {
				unset := shortcutstest.WithAttribute(config, attr, tftypes.NewValue((*d.value).Type(), nil))
				plan(attr+" unset, the state holding its default", true, unset, shortcutstest.WithAttribute(state, attr, *d.value))
				if other := shortcutstest.Sample((*d.value).Type(), 1); !other.Equal(*d.value) {
					// The framework plans the default, or keeps the job's value (an etcd image).
					plan(attr+" unset, the state holding another value", false, unset, shortcutstest.WithAttribute(state, attr, other))
				}
			}
			// The attributes of a list's objects: those of its one sample element.
			for inner, id := range d.inside {
				if d.single || id.value == nil {
					continue
				}
				at := attr + "[0]." + inner
				inElement := func(o tftypes.Value, v tftypes.Value) tftypes.Value {
					return shortcutstest.WithAttribute(o, attr, eachElement(shortcutstest.Attributes(o)[attr], func(e tftypes.Value) tftypes.Value { return shortcutstest.WithAttribute(e, inner, v) }))
				}
				unset := inElement(config, tftypes.NewValue((*id.value).Type(), nil))
				plan(at+" unset, the state holding its default", true, unset, inElement(state, *id.value))
				if other := shortcutstest.Sample((*id.value).Type(), 1); !other.Equal(*id.value) {
					plan(at+" unset, the state holding another value", false, unset, inElement(state, other))
				}
			}
		}
	}
}

// The provider serves its list resources through the shortcut's server: it embeds every
// optional interface of the framework's.
func TestTheProviderServerServesListResources(t *testing.T) {
	server, ok := New(training.New("test")()).(tfprotov6.ListResourceServer)
	if !ok {
		t.Fatal("no list resources")
	}
	resp, err := server.ValidateListResourceConfig(context.Background(),
		&tfprotov6.ValidateListResourceConfigRequest{TypeName: "training_mpi_job"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		if strings.Contains(d.Summary, "Not Implemented") {
			t.Fatal(d.Summary)
		}
	}
}

// knownOf is the object a with each attribute that b holds known and different in b's place.
func knownOf(a, b tftypes.Value) tftypes.Value {
	vals := shortcutstest.Attributes(a)
	for name, v := range shortcutstest.Attributes(b) {
		if v.IsFullyKnown() && !v.Equal(vals[name]) {
			vals[name] = v
		}
	}
	return tftypes.NewValue(a.Type(), vals)
}

// planRequest is Terraform's plan of an update whose proposal is the prior state.
func planRequest(t *testing.T, typeName string, typ tftypes.Type, config, state tftypes.Value) *tfprotov6.PlanResourceChangeRequest {
	t.Helper()
	dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
		d, err := tfprotov6.NewDynamicValue(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		return &d
	}
	prior := dv(state)
	return &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, Config: dv(config), PriorState: prior, ProposedNewState: dv(state)}
}

// configOf is the configuration that state plans unchanged from: state without the attributes
// only the provider sets, at any depth.
func configOf(attrs map[string]schema.Attribute, blocks map[string]schema.Block, state tftypes.Value) tftypes.Value {
	if state.IsNull() {
		return state
	}
	vals := shortcutstest.Attributes(state)
	for name, a := range attrs {
		if a.IsComputed() && !a.IsOptional() {
			vals[name] = tftypes.NewValue(vals[name].Type(), nil)
			continue
		}
		switch a := a.(type) {
		case schema.ListNestedAttribute:
			vals[name] = eachElement(vals[name], func(e tftypes.Value) tftypes.Value {
				return configOf(a.NestedObject.Attributes, nil, e)
			})
		case schema.SingleNestedAttribute:
			vals[name] = configOf(a.Attributes, nil, vals[name])
		}
	}
	for name, b := range blocks {
		switch b := b.(type) {
		case schema.ListNestedBlock:
			vals[name] = eachElement(vals[name], func(e tftypes.Value) tftypes.Value {
				return configOf(b.NestedObject.Attributes, b.NestedObject.Blocks, e)
			})
		case schema.SingleNestedBlock:
			vals[name] = configOf(b.Attributes, b.Blocks, vals[name])
		}
	}
	return tftypes.NewValue(state.Type(), vals)
}

// eachElement is the list l with f applied to each element.
func eachElement(l tftypes.Value, f func(tftypes.Value) tftypes.Value) tftypes.Value {
	var in []tftypes.Value
	if err := l.As(&in); err != nil {
		panic(err)
	}
	elems := make([]tftypes.Value, len(in))
	for i := range in {
		elems[i] = f(in[i])
	}
	return tftypes.NewValue(l.Type(), elems)
}
