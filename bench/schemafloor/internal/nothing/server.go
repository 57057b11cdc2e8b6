// Package nothing is a Terraform provider server that answers every call about configuration,
// state and plans by doing nothing: no validation, no API request, Terraform's proposal as the
// plan, the state as stored as the refresh, the plan as the applied state. It serves the
// resource schemas of the plugin-framework server it wraps, which answers the schema calls.
package nothing

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/bench/schemafloor/internal/shapes"
)

// Server does nothing for the resource types of the server it wraps, and of extra.
type Server struct {
	tfprotov6.ProviderServer
	schemas map[string]*tfprotov6.Schema
	types   map[string]tftypes.Type
	// shape is the form the job resources' schemas are served in, and their stored states read
	// in; originals are their schemas as the wrapped server has them.
	shape     shapes.Shape
	originals map[string]*tfprotov6.Schema
}

// New wraps framework (which answers the schema calls) and adds the resource types of extra; it
// serves the job resources in shape.
func New(framework tfprotov6.ProviderServer, extra map[string]*tfprotov6.Schema, shape shapes.Shape) *Server {
	s := &Server{ProviderServer: framework, schemas: map[string]*tfprotov6.Schema{}, types: map[string]tftypes.Type{},
		shape: shape, originals: map[string]*tfprotov6.Schema{}}
	resp, err := framework.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		panic(err)
	}
	for name, schema := range resp.ResourceSchemas {
		s.schemas[name] = schema
		if shapes.IsJob(name) {
			s.originals[name] = schema
			s.schemas[name] = shape.Schema(schema)
		}
	}
	for name, schema := range extra {
		s.schemas[name] = schema
	}
	for name, schema := range s.schemas {
		s.types[name] = schema.ValueType()
	}
	return s
}

func (s *Server) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := s.ProviderServer.GetProviderSchema(ctx, req)
	if err != nil {
		return nil, err
	}
	resp.ResourceSchemas = s.schemas
	return resp, nil
}

func (s *Server) ValidateProviderConfig(_ context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return &tfprotov6.ValidateProviderConfigResponse{PreparedConfig: req.Config}, nil
}

func (s *Server) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (s *Server) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

// UpgradeResourceState decodes the stored state as it is: the one conversion Terraform needs
// from any provider.
func (s *Server) UpgradeResourceState(_ context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	typ, ok := s.types[req.TypeName]
	if !ok {
		return nil, fmt.Errorf("nothing: no resource type %q", req.TypeName)
	}
	raw := req.RawState
	if original := s.originals[req.TypeName]; original != nil && raw.JSON != nil {
		shaped, err := s.shape.State(raw.JSON, original.Block)
		if err != nil {
			return nil, err
		}
		raw = &tfprotov6.RawState{JSON: shaped}
	}
	value, err := raw.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		return nil, err
	}
	state, err := tfprotov6.NewDynamicValue(typ, value)
	if err != nil {
		return nil, err
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &state}, nil
}

func (s *Server) ReadResource(_ context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}, nil
}

func (s *Server) PlanResourceChange(_ context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate, PlannedIdentity: req.PriorIdentity}, nil
}

// ApplyResourceChange stores the plan: for the resource types whose every attribute the
// configuration sets, that is the configuration.
func (s *Server) ApplyResourceChange(_ context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return &tfprotov6.ApplyResourceChangeResponse{NewState: req.PlannedState, Private: req.PlannedPrivate, NewIdentity: req.PlannedIdentity}, nil
}
