package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// clientFrom takes the client out of the provider data handed to resources and data sources;
// nil data (validation before the provider is configured) gives a nil client.
func clientFrom(data any, diags *diag.Diagnostics) *kube.Client {
	if data == nil {
		return nil
	}
	client, ok := data.(*kube.Client)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *kube.Client, got %T. This is a bug in the provider; please report this issue.", data))
	}
	return client
}
