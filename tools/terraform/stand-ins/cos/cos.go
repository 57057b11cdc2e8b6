// Package cos stands in for Terraform's cos state backend (see the standin package).
package cos

import (
	"github.com/hashicorp/terraform/internal/backend"
	"github.com/hashicorp/terraform/internal/backend/remote-state/standin"
)

// New returns the stand-in.
func New() backend.Backend { return standin.New("cos") }
