// Command schemafloor is a Terraform provider that serves this provider's schema and does nothing
// else (package nothing). The bench plans the training jobs' state with it in place of the real
// provider, which puts what Terraform itself costs for N resources of this schema (decoding,
// evaluating and diffing them, and the gRPC calls to a plugin process) apart from the provider's
// own work. No provider of this schema can plan faster. Its sibling command plugin does the same
// with terraform_data's one attribute.
package main

import (
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/kubetrain/terraform-provider-training/bench/schemafloor/internal/nothing"
	"github.com/kubetrain/terraform-provider-training/internal/provider"
)

func main() {
	err := tf6server.Serve("registry.terraform.io/kubetrain/training", func() tfprotov6.ProviderServer {
		return nothing.New(providerserver.NewProtocol6(provider.New("schemafloor")())(), nil)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
