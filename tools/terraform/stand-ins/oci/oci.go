// Package oci stands in for Terraform's oci state backend (see the standin package).
package oci

import (
	"github.com/hashicorp/terraform/internal/backend"
	"github.com/hashicorp/terraform/internal/backend/remote-state/standin"
)

// New returns the stand-in.
func New() backend.Backend { return standin.New("oci") }
