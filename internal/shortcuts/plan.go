package shortcuts

import (
	"bytes"
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A planShape is what an unchanged plan of one resource type is checked against.
type planShape struct {
	state tftypes.Type
	// nullIdentity is the null identity the framework plans where Terraform sent none (before
	// 1.12), nil for a resource without identity.
	nullIdentity *tfprotov6.ResourceIdentityData
	// defaults are the attributes with a default, or with attributes inside that have one.
	defaults map[string]*attrDefault
	// modifiers run the top-level plan modifiers that may change an unchanged plan (toRun), each
	// saying whether it keeps it.
	modifiers []func(ctx context.Context, config tfsdk.Config, state tfsdk.State) bool
	schema    schema.Schema
	// writeOnly are the write-only attributes: a prior state that holds one (Terraform never
	// stores them) is planned by the framework, which nulls it.
	writeOnly []string
}

// attrDefault is an attribute's default and those of the attributes inside it.
type attrDefault struct {
	// value is the attribute's own default, nil without one.
	value *tftypes.Value
	// inside are the defaults of the attributes of the attribute's object (single) or of each
	// of its list's objects.
	inside map[string]*attrDefault
	single bool
}

func (s *server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	s.init(ctx)
	if shape := s.shapes[req.TypeName]; shape != nil {
		if resp, ok := shape.plan(ctx, req); ok {
			return resp, nil
		}
	}
	return forward(ctx, req, s.frameworkServer.PlanResourceChange)
}

func (s *server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	s.init(ctx)
	if shape := s.reads[req.TypeName]; shape != nil {
		if resp, ok := shape.read(ctx, s.resourceData(), req); ok {
			return resp, nil
		}
	}
	return forward(ctx, req, s.frameworkServer.ReadResource)
}

func (s *server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	s.init(ctx)
	if shape := s.validates[req.TypeName]; shape != nil {
		if resp, ok := shape.validate(ctx, s.resourceData(), req); ok {
			return resp, nil
		}
	}
	return forward(ctx, req, s.frameworkServer.ValidateResourceConfig)
}

func (s *server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	s.init(ctx)
	if shape := s.reads[req.TypeName]; shape != nil {
		if resp, ok := shape.upgrade(req); ok {
			return resp, nil
		}
	}
	return forward(ctx, req, s.frameworkServer.UpgradeResourceState)
}

// plan answers the plan of an update whose proposal is byte for byte the prior state, when
// every attribute that the configuration leaves unset has its default in that state and the
// plan modifiers that may change such a plan (an elastic job's dependents, a count derived from
// the GPUs) keep it: then the framework would plan the proposal, keep the private state and the
// identity, and ask for no replacement (its computed values are marked unknown only when the
// plan differs from the state). ok is false for every other plan.
func (p *planShape) plan(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (resp *tfprotov6.PlanResourceChangeResponse, ok bool) {
	prior, proposed := req.PriorState, req.ProposedNewState
	if prior == nil || proposed == nil || req.Config == nil || len(prior.MsgPack) == 0 || !bytes.Equal(prior.MsgPack, proposed.MsgPack) {
		return nil, false
	}
	state, err := proposed.Unmarshal(p.state)
	if err != nil || state.IsNull() || holdsWriteOnly(state, p.writeOnly) {
		return nil, false
	}
	config, err := req.Config.Unmarshal(p.state)
	if err != nil || !defaultsHold(p.defaults, config, state) {
		return nil, false
	}
	for _, keeps := range p.modifiers {
		if !keeps(ctx, tfsdk.Config{Raw: config, Schema: p.schema}, tfsdk.State{Raw: state, Schema: p.schema}) {
			return nil, false
		}
	}
	identity := req.PriorIdentity
	if identity == nil {
		identity = p.nullIdentity
	}
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: proposed, PlannedPrivate: req.PriorPrivate, PlannedIdentity: identity}, true
}

// defaultsHold says whether every attribute of defaults that config leaves null (or whose
// object config leaves null) holds its default in state, as the framework's defaults would
// make it.
func defaultsHold(defaults map[string]*attrDefault, config, state tftypes.Value) bool {
	if len(defaults) == 0 || state.IsNull() {
		return true
	}
	if !config.IsKnown() || !state.IsKnown() {
		return false
	}
	var configs, states map[string]tftypes.Value
	if err := state.As(&states); err != nil {
		return false
	}
	if !config.IsNull() {
		if err := config.As(&configs); err != nil {
			return false
		}
	}
	for name, d := range defaults {
		c, s := configs[name], states[name] // c is the zero Value, which is null, under a null config
		if c.Type() == nil {
			c = tftypes.NewValue(s.Type(), nil)
		}
		switch {
		case d.value != nil && c.IsNull():
			if !s.Equal(*d.value) {
				return false
			}
		case d.inside == nil || s.IsNull():
		case d.single:
			if !defaultsHold(d.inside, c, s) {
				return false
			}
		default:
			if !elementDefaultsHold(d.inside, c, s) {
				return false
			}
		}
	}
	return true
}

// elementDefaultsHold is defaultsHold for each object of a list attribute or block.
func elementDefaultsHold(defaults map[string]*attrDefault, config, state tftypes.Value) bool {
	if !config.IsKnown() || !state.IsKnown() {
		return false
	}
	var configs, states []tftypes.Value
	if err := state.As(&states); err != nil {
		return false
	}
	if !config.IsNull() {
		if err := config.As(&configs); err != nil || len(configs) != len(states) {
			return false
		}
	}
	for i, s := range states {
		c := tftypes.NewValue(s.Type(), nil)
		if configs != nil {
			c = configs[i]
		}
		if !defaultsHold(defaults, c, s) {
			return false
		}
	}
	return true
}

// planShapes are the shapes of the provider's resources that keep unchanged plans and whose
// schema shapeOf understands, and of those the read shapes of the ones whose refreshes
// readShapeOf understands and the validate shapes of the ones whose configurations
// validateShapeOf does; the others are planned, read and validated by the framework alone.
func planShapes(ctx context.Context, p provider.Provider) (map[string]*planShape, map[string]*readShape, map[string]*validateShape) {
	shapes, reads, validates := map[string]*planShape{}, map[string]*readShape{}, map[string]*validateShape{}
	typeName := typeNameOf(ctx, p)
	for _, f := range p.Resources(ctx) {
		name, shape, err := shapeOf(ctx, typeName, f())
		if err != nil || shape == nil {
			continue
		}
		shapes[name] = shape
		read, err := readShapeOf(ctx, f, shape.schema)
		if err != nil {
			continue
		}
		reads[name] = read
		if v, err := validateShapeOf(ctx, f, shape.schema, read.blocks); err == nil {
			validates[name] = v
		}
	}
	return shapes, reads, validates
}

// typeNameOf is the provider's type name, which prefixes its resources' names.
func typeNameOf(ctx context.Context, p provider.Provider) string {
	var meta provider.MetadataResponse
	p.Metadata(ctx, provider.MetadataRequest{}, &meta)
	return meta.TypeName
}

// shapeOf is the type name and plan shape of r (of the provider typeName); shape is nil when r does not say its ModifyPlan is a
// no-op on unchanged plans (ResourceNoOpOnUnchangedPlan), err says what of its schema does not let its unchanged plans be answered here.
func shapeOf(ctx context.Context, typeName string, r resource.Resource) (name string, shape *planShape, err error) {
	var meta resource.MetadataResponse
	r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: typeName}, &meta)
	if _, ok := r.(ResourceNoOpOnUnchangedPlan); !ok {
		return meta.TypeName, nil, nil
	}
	var sch resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sch)
	if sch.Diagnostics.HasError() {
		return meta.TypeName, nil, fmt.Errorf("schema: %v", sch.Diagnostics)
	}
	shape = &planShape{state: sch.Schema.Type().TerraformType(ctx), schema: sch.Schema, writeOnly: writeOnlyOf(sch.Schema)}
	if shape.defaults, err = defaultsOf(ctx, sch.Schema.Attributes, sch.Schema.Blocks, ""); err != nil {
		return meta.TypeName, nil, err
	}
	for name, a := range sch.Schema.Attributes {
		for _, m := range toRun(a) {
			run, err := runModifier(name, m)
			if err != nil {
				return meta.TypeName, nil, err
			}
			shape.modifiers = append(shape.modifiers, run)
		}
	}
	if ir, ok := r.(resource.ResourceWithIdentity); ok {
		var ids resource.IdentitySchemaResponse
		ir.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ids)
		typ := ids.IdentitySchema.Type().TerraformType(ctx)
		null, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
		if err != nil {
			return meta.TypeName, nil, err
		}
		shape.nullIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &null}
	}
	return meta.TypeName, shape, nil
}
