// Command terraform-provider-training serves the training provider to Terraform.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/kubetrain/terraform-provider-training/internal/provider"
)

// version is set at release time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/kubetrain/training",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
