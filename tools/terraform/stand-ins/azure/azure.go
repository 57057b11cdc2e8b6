// Package azure stands in for Terraform's azure state backend (see the standin package).
package azure

import (
	"github.com/hashicorp/terraform/internal/backend"
	"github.com/hashicorp/terraform/internal/backend/remote-state/standin"
)

// New returns the stand-in.
func New() backend.Backend { return standin.New("azure") }
