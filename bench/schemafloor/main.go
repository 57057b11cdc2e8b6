// Command schemafloor is a Terraform provider that serves this provider's schema and does nothing
// else: no validation, no API request, a plan that is Terraform's proposal and a refresh that is
// the state as stored. The bench plans the training jobs' state with it in place of the real
// provider, which puts what Terraform itself costs for N resources of this schema (decoding,
// evaluating and diffing them, and the gRPC calls to a plugin process) apart from the provider's
// own work. No provider of this schema can plan faster.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/internal/provider"
)

func main() {
	err := tf6server.Serve("registry.terraform.io/kubetrain/training", func() tfprotov6.ProviderServer {
		return newServer(providerserver.NewProtocol6(provider.New("schemafloor")())())
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// server answers the schema calls with the real provider's server and every call about
// configuration, state and plans itself, doing nothing.
type server struct {
	tfprotov6.ProviderServer
	types map[string]tftypes.Type
}

func newServer(framework tfprotov6.ProviderServer) *server {
	s := &server{ProviderServer: framework, types: map[string]tftypes.Type{}}
	resp, err := framework.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		panic(err)
	}
	for name, schema := range resp.ResourceSchemas {
		s.types[name] = schema.ValueType()
	}
	return s
}

func (s *server) ValidateProviderConfig(_ context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return &tfprotov6.ValidateProviderConfigResponse{PreparedConfig: req.Config}, nil
}

func (s *server) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (s *server) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

// UpgradeResourceState decodes the stored state as it is: the one conversion Terraform needs
// from any provider.
func (s *server) UpgradeResourceState(_ context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	typ, ok := s.types[req.TypeName]
	if !ok {
		return nil, fmt.Errorf("schemafloor: no resource type %q", req.TypeName)
	}
	value, err := req.RawState.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		return nil, err
	}
	state, err := tfprotov6.NewDynamicValue(typ, value)
	if err != nil {
		return nil, err
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &state}, nil
}

func (s *server) ReadResource(_ context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}, nil
}

func (s *server) PlanResourceChange(_ context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate, PlannedIdentity: req.PriorIdentity}, nil
}
