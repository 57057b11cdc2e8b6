// Command plugin is the plugin protocol's floor: a Terraform provider doing nothing (package
// nothing) with one resource type, training_floor_data, whose one attribute, input, holds any
// value, as terraform_data's does. The bench gives it terraform_data's configuration: the
// difference between the two is what serving N resources from a plugin process costs Terraform
// before any schema or provider work. The binary holds the plugin framework and nothing of this
// provider, so its start is as cheap as a provider's can be.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/bench/schemafloor/internal/nothing"
	"github.com/kubetrain/terraform-provider-training/bench/schemafloor/internal/shapes"
)

var dataSchema = &tfprotov6.Schema{Block: &tfprotov6.SchemaBlock{Attributes: []*tfprotov6.SchemaAttribute{
	{Name: "input", Type: tftypes.DynamicPseudoType, Optional: true},
}}}

// empty is a provider with no configuration and no resource type of its own: the framework's
// answer to the schema calls, to which nothing.New adds training_floor_data.
type empty struct{}

func (empty) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "training"
}
func (empty) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse)          {}
func (empty) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {}
func (empty) Resources(context.Context) []func() resource.Resource                              { return nil }
func (empty) DataSources(context.Context) []func() datasource.DataSource                        { return nil }

func main() {
	err := tf6server.Serve("registry.terraform.io/kubetrain/training", func() tfprotov6.ProviderServer {
		return nothing.New(providerserver.NewProtocol6(empty{})(), map[string]*tfprotov6.Schema{"training_floor_data": dataSchema}, shapes.Shapes[0])
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
