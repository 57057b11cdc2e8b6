// Package shortcuts serves a provider as the plugin framework's server does
// (providerserver.NewProtocol6), answering four requests without the framework's walks over
// the schema where its answer is certain to be the framework's. It is composed where the
// binary starts (main.go); the provider knows it only by the markers below.
//
// # Why
//
// Terraform sends each resource of a configuration a validation, a refresh and a plan, and the
// framework answers each by walking every attribute of the schema from its root, copying the
// schema's attribute maps at every step. With the 50-odd attributes of a job that was most of
// the provider's CPU in a plan of 100 jobs (bench/README.md has what it buys, measured).
//
// # The contract
//
// For a resource type whose schema it understands (see planShapes; anything else goes to the
// framework), the server answers:
//
//   - ValidateResourceConfig: the schema's validators, then the resource's config validators
//     and ValidateConfig, in the framework's order, with its requests and diagnostics, and its
//     refusal of a write-only value from a Terraform that cannot send one (validate.go,
//     schema_walk.go).
//   - ReadResource, a refresh with no private state: the resource's own Read, its null list
//     blocks made empty as the framework makes them; an error, a diagnostic at a path, a
//     changed identity or a state holding a write-only value (which the framework nulls) goes
//     to the framework (read.go).
//   - UpgradeResourceState at the schema's version: the stored JSON decoded as the framework
//     decodes it; another version goes to the framework's upgraders (read.go, state_json.go).
//   - PlanResourceChange whose proposal is byte for byte the prior state, when every attribute
//     the configuration leaves unset holds its default and every plan modifier that may act
//     keeps the plan without a diagnostic, and no write-only attribute holds a value: the
//     proposal, the prior private state and identity (plan.go, plan_schema.go). A warning a modifier adds sends the plan to the framework, so
//     no diagnostic is dropped.
//
// Every other request goes to the framework, on a context it cannot hold once answered
// (forward.go).
//
// What the provider promises in return, each held by a test of this package:
//
//   - A resource that implements ResourceNoOpOnUnchangedPlan: its ModifyPlan changes nothing
//     and says nothing when the plan is the prior state. Work added to such a ModifyPlan does
//     not run on an unchanged plan; put it where it runs (a plan modifier that is not marked,
//     ValidateConfig) or drop the marker.
//   - A plan modifier that implements ModifierNoOpOnUnchangedPlan: it keeps a plan that is the
//     state, with no replacement and no diagnostic. Unmarked modifiers of top-level attributes
//     are run; a nested attribute's unmarked modifier keeps the resource with the framework.
//   - A provider that implements ProviderWithResourceData hands its resources, after
//     Configure, what ResourceData returns; without it no refresh or validation is answered
//     here.
//
// The answers were checked against terraform-plugin-framework at FrameworkVersion: a test
// fails when go.mod names another, and Checked (which every acceptance test's server is)
// compares each answer with the framework's.
//
// # The switch
//
// Env=off serves the framework's server alone (for a support case: a behaviour that differs
// with it off is a bug of this package); Env=check answers as on and logs, as a warning in
// Terraform's log, each answer that differs from the framework's.
package shortcuts

import (
	"context"
	"os"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Env names the switch: "off" serves the framework alone, "check" compares every answer with
// the framework's and logs a difference; anything else (or unset) serves the shortcuts.
const Env = "TF_PROVIDER_TRAINING_SHORTCUTS"

// FrameworkVersion is the terraform-plugin-framework release whose answers these are.
const FrameworkVersion = "v1.19.0"

// ResourceNoOpOnUnchangedPlan is a resource whose ModifyPlan returns at once, changing and
// saying nothing, when the plan is the prior state.
type ResourceNoOpOnUnchangedPlan interface {
	resource.Resource
	ResourceNoOpOnUnchangedPlan()
}

// ModifierNoOpOnUnchangedPlan is a plan modifier that keeps a plan equal to the state, with no
// replacement and no diagnostic: the server need not run it on an unchanged plan.
type ModifierNoOpOnUnchangedPlan interface{ ModifierNoOpOnUnchangedPlan() }

// ProviderWithResourceData is a provider that says what its Configure handed its resources
// (nil before it ran).
type ProviderWithResourceData interface{ ResourceData() any }

// New serves p as the switch (Env) says: by default the framework's server with the shortcuts.
func New(p provider.Provider) tfprotov6.ProviderServer {
	switch os.Getenv(Env) {
	case "off":
		return providerserver.NewProtocol6(p)()
	case "check":
		return Checked(p, func(ctx context.Context, difference string) {
			tflog.Warn(ctx, "a shortcut answered otherwise than the framework", map[string]any{"difference": difference})
		})
	}
	return newServer(p)
}

func newServer(p provider.Provider) *server {
	framework, ok := providerserver.NewProtocol6(p)().(frameworkServer)
	if !ok {
		panic("the plugin framework's server no longer serves list resources, actions and state stores")
	}
	return &server{frameworkServer: framework, provider: p}
}

// frameworkServer is every RPC the framework's server answers: those of its optional interfaces
// too, which a server that embedded only tfprotov6.ProviderServer would not serve (Terraform
// then reports list resources as not implemented).
type frameworkServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

var _ frameworkServer = (*server)(nil)

// server is the framework's server, with the requests of the contract answered here.
type server struct {
	frameworkServer
	provider provider.Provider

	once sync.Once
	// shapes are the resource types whose unchanged plans are answered here, by type name;
	// reads those whose refreshes are, validates those whose configurations are.
	shapes    map[string]*planShape
	reads     map[string]*readShape
	validates map[string]*validateShape
}

// resourceData is what the provider's Configure handed the resources, nil before it ran or
// when the provider does not say (ProviderWithResourceData).
func (s *server) resourceData() any {
	if p, ok := s.provider.(ProviderWithResourceData); ok {
		return p.ResourceData()
	}
	return nil
}

func (s *server) init(ctx context.Context) {
	s.once.Do(func() { s.shapes, s.reads, s.validates = planShapes(ctx, s.provider) })
}
