package shortcuts

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Terraform validates the configuration of every resource instance it plans. The framework's
// validation reads each attribute's value by its path from the configuration's root, finding
// the attribute's type again from the schema's root at every step (and copying the schema's
// 50-odd top-level attributes each time): a millisecond a job, half of the provider's CPU in a
// plan of 300 jobs without refresh. directValidate validates a job's configuration as the
// framework does, in the same order of checks and with the same validators, requests and
// diagnostics, walking the configuration's value alongside its schema once.

// validateShape is what a job resource's configuration is validated with apart from the
// framework.
type validateShape struct {
	newResource func() resource.Resource
	schema      schema.Schema
	config      tftypes.Type
	blocks      map[string]*blockShape
}

// validateShapeOf is the validate shape of a job resource; err says what of its schema leaves
// its validation to the framework.
func validateShapeOf(ctx context.Context, newResource func() resource.Resource, sch schema.Schema, blocks map[string]*blockShape) (*validateShape, error) {
	if err := walkable(sch.Attributes, sch.Blocks, ""); err != nil {
		return nil, err
	}
	return &validateShape{newResource: newResource, schema: sch, config: sch.Type().TerraformType(ctx), blocks: blocks}, nil
}

// walkable fails on what validate does not walk as the framework does: an attribute that is
// neither required, optional nor computed, or write-only and computed or both required and
// optional (the framework's errors for those are left to it), a write-only attribute inside
// another, an attribute whose validators are not of a kind handled here, a set block.
func walkable(attrs map[string]schema.Attribute, blocks map[string]schema.Block, prefix string) error {
	for name, a := range attrs {
		at := prefix + name
		if !a.IsRequired() && !a.IsOptional() && !a.IsComputed() ||
			a.IsWriteOnly() && (a.IsComputed() || a.IsRequired() && a.IsOptional() || prefix != "") {
			return fmt.Errorf("%s: not walked", at)
		}
		switch a := a.(type) {
		case schema.StringAttribute, schema.BoolAttribute, schema.Int64Attribute, schema.NumberAttribute, schema.ListAttribute,
			schema.MapAttribute, schema.SetAttribute, schema.ObjectAttribute:
		case schema.ListNestedAttribute:
			if err := walkable(a.NestedObject.Attributes, nil, at+"."); err != nil {
				return err
			}
		case schema.SetNestedAttribute:
			if err := walkable(a.NestedObject.Attributes, nil, at+"."); err != nil {
				return err
			}
		case schema.MapNestedAttribute:
			if err := walkable(a.NestedObject.Attributes, nil, at+"."); err != nil {
				return err
			}
		case schema.SingleNestedAttribute:
			if err := walkable(a.Attributes, nil, at+"."); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: a %T is not walked", at, a)
		}
	}
	for name, b := range blocks {
		at := prefix + name
		var err error
		switch b := b.(type) {
		case schema.ListNestedBlock:
			err = walkable(b.NestedObject.Attributes, b.NestedObject.Blocks, at+".")
		case schema.SingleNestedBlock:
			err = walkable(b.Attributes, b.Blocks, at+".")
		default:
			err = fmt.Errorf("%s: a %T is not walked", at, b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// validate answers req as the framework would, or says it cannot (ok false): data is what the
// provider's Configure handed the resources.
func (s *validateShape) validate(ctx context.Context, data any, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, bool) {
	if req.Config == nil {
		return nil, false
	}
	raw, err := req.Config.Unmarshal(s.config)
	if err != nil {
		return nil, false
	}
	config := tfsdk.Config{Schema: s.schema, Raw: nullEmptyBlocks(raw, s.blocks)}
	r, ok := configured(ctx, s.newResource(), data)
	if !ok {
		return nil, false
	}
	vreq := resource.ValidateConfigRequest{Config: config}
	if req.ClientCapabilities != nil {
		vreq.ClientCapabilities.WriteOnlyAttributesAllowed = req.ClientCapabilities.WriteOnlyAttributesAllowed
	}
	var diags diag.Diagnostics
	if v, ok := r.(resource.ResourceWithConfigValidators); ok {
		for _, cv := range v.ConfigValidators(ctx) {
			var vresp resource.ValidateConfigResponse
			cv.ValidateResource(ctx, vreq, &vresp)
			diags.Append(vresp.Diagnostics...)
		}
	}
	if v, ok := r.(resource.ResourceWithValidateConfig); ok {
		var vresp resource.ValidateConfigResponse
		v.ValidateConfig(ctx, vreq, &vresp)
		diags.Append(vresp.Diagnostics...)
	}
	w := &schemaWalk{ctx: ctx, config: config, diags: &diags, ok: true,
		caps: validator.ValidateSchemaClientCapabilities{WriteOnlyAttributesAllowed: vreq.ClientCapabilities.WriteOnlyAttributesAllowed}}
	w.object(path.Empty(), path.Expression{}, s.schema.Attributes, s.schema.Blocks, config.Raw)
	if !w.ok {
		return nil, false
	}
	if s.schema.DeprecationMessage != "" {
		diags.AddWarning("Deprecated", s.schema.DeprecationMessage)
	}
	out, ok := protoDiagnosticsWithPaths(ctx, diags)
	if !ok {
		return nil, false
	}
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: out}, true
}

// protoDiagnosticsWithPaths is diags as the framework sends them, each at its attribute's path.
func protoDiagnosticsWithPaths(ctx context.Context, diags diag.Diagnostics) ([]*tfprotov6.Diagnostic, bool) {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{Summary: d.Summary(), Detail: d.Detail()}
		switch d.Severity() {
		case diag.SeverityError:
			pd.Severity = tfprotov6.DiagnosticSeverityError
		case diag.SeverityWarning:
			pd.Severity = tfprotov6.DiagnosticSeverityWarning
		default:
			pd.Severity = tfprotov6.DiagnosticSeverityInvalid
		}
		if at, ok := d.(diag.DiagnosticWithPath); ok {
			p, err := attributePath(ctx, at.Path())
			if err != nil {
				return nil, false
			}
			pd.Attribute = p
		}
		out = append(out, pd)
	}
	return out, true
}

// attributePath is p as the protocol names it.
func attributePath(ctx context.Context, p path.Path) (*tftypes.AttributePath, error) {
	var steps []tftypes.AttributePathStep
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case path.PathStepAttributeName:
			steps = append(steps, tftypes.AttributeName(string(s)))
		case path.PathStepElementKeyInt:
			steps = append(steps, tftypes.ElementKeyInt(int64(s)))
		case path.PathStepElementKeyString:
			steps = append(steps, tftypes.ElementKeyString(string(s)))
		case path.PathStepElementKeyValue:
			v, err := s.ToTerraformValue(ctx)
			if err != nil {
				return nil, err
			}
			steps = append(steps, tftypes.ElementKeyValue(v))
		default:
			return nil, fmt.Errorf("a path step %T", s)
		}
	}
	return tftypes.NewAttributePathWithSteps(steps), nil
}
