// Package gcs stands in for Terraform's gcs state backend (see the standin package).
package gcs

import (
	"github.com/hashicorp/terraform/internal/backend"
	"github.com/hashicorp/terraform/internal/backend/remote-state/standin"
)

// New returns the stand-in.
func New() backend.Backend { return standin.New("gcs") }
