package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// providerData is what the provider hands its resources and data sources: the client, and
// the settings that are not the cluster's.
type providerData struct {
	client *kube.Client
	// placementCheck: plans warn about jobs no node can host (placement_check).
	placementCheck bool
	// admissionPrediction: plans of queued jobs say what Kueue would do (admission_prediction).
	admissionPrediction bool
	// declared is what this process's plan declares of Kueue's queues (kueue.Declared).
	declared *kueue.Declared
}

// clientFrom takes the client out of the provider data handed to resources and data sources;
// nil data (validation before the provider is configured) gives a nil client.
func clientFrom(data any, diags *diag.Diagnostics) *kube.Client {
	if d := dataFrom(data, diags); d != nil {
		return d.client
	}
	return nil
}

func dataFrom(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil
	}
	d, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report this issue.", data))
	}
	return d
}
