// Package standin is the state backend built in place of a remote-state backend whose module the
// Go module proxy does not serve at this Terraform release (see tools/terraform/go.mod). The
// Terraform built here runs the provider's tests, which keep state locally; a configuration
// that names such a backend gets an error saying it is not in this build.
package standin

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/hashicorp/terraform/internal/backend"
	"github.com/hashicorp/terraform/internal/configs/configschema"
	"github.com/hashicorp/terraform/internal/states/statemgr"
	"github.com/hashicorp/terraform/internal/tfdiags"
)

// New returns the stand-in for the named backend.
func New(name string) backend.Backend { return unavailable{name: name} }

type unavailable struct{ name string }

func (u unavailable) error() tfdiags.Diagnostics {
	var diags tfdiags.Diagnostics
	return diags.Append(tfdiags.Sourceless(tfdiags.Error, "The "+u.name+" backend is not in this build",
		"This Terraform was built for the provider's tests from the Go module proxy, which does not serve the "+u.name+" backend's module at this release."))
}

func (unavailable) ConfigSchema() *configschema.Block { return &configschema.Block{} }

func (u unavailable) PrepareConfig(v cty.Value) (cty.Value, tfdiags.Diagnostics) { return v, u.error() }

func (u unavailable) Configure(cty.Value) tfdiags.Diagnostics { return u.error() }

func (u unavailable) StateMgr(string) (statemgr.Full, tfdiags.Diagnostics) { return nil, u.error() }

func (u unavailable) DeleteWorkspace(string, bool) tfdiags.Diagnostics { return u.error() }

func (u unavailable) Workspaces() ([]string, tfdiags.Diagnostics) { return nil, u.error() }
