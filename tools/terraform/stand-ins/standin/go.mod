// The state backend that stands in for those of Terraform's nested modules that the Go module
// proxy does not serve at the release built here (see ../../go.mod).
module github.com/hashicorp/terraform/internal/backend/remote-state/standin

go 1.26.6

require github.com/hashicorp/terraform v1.15.0
