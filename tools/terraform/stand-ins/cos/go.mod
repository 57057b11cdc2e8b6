module github.com/hashicorp/terraform/internal/backend/remote-state/cos

go 1.26.6

require (
	github.com/hashicorp/terraform v1.15.0
	github.com/hashicorp/terraform/internal/backend/remote-state/standin v0.0.0-00010101000000-000000000000
)
