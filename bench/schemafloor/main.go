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
	"github.com/kubetrain/terraform-provider-training/bench/schemafloor/internal/shapes"
	"github.com/kubetrain/terraform-provider-training/internal/provider"
)

// shapeEnv names the schema shape (package shapes) the job resources are served in; unset, they
// are served as they are.
const shapeEnv = "BENCH_SCHEMA_SHAPE"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-shapes" {
		// The bench asks which shapes there are: one a line, its name and what it is.
		for _, s := range shapes.Shapes {
			fmt.Printf("%s\t%s\n", s.Name, s.Description)
		}
		return
	}
	shape := shapes.Shapes[0]
	if name := os.Getenv(shapeEnv); name != "" {
		var err error
		if shape, err = shapes.Named(name); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	err := tf6server.Serve("registry.terraform.io/kubetrain/training", func() tfprotov6.ProviderServer {
		return nothing.New(providerserver.NewProtocol6(provider.New("schemafloor")())(), nil, shape)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
