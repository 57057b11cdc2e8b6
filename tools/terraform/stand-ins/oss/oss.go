// Package oss stands in for Terraform's oss state backend (see the standin package).
package oss

import (
	"github.com/hashicorp/terraform/internal/backend"
	"github.com/hashicorp/terraform/internal/backend/remote-state/standin"
)

// New returns the stand-in.
func New() backend.Backend { return standin.New("oss") }
