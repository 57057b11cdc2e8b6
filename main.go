// Command terraform-provider-training serves the training provider to Terraform.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/kubetrain/terraform-provider-training/internal/provider"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts"
)

// version is set at release time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	quietUnreadSDKLogs()
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	stopProfiles := profile(os.Getenv(profileEnv))
	defer stopProfiles()

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	// The plugin framework's server, with the requests internal/shortcuts answers without the
	// framework's walks (shortcuts.Env turns them off).
	server := func() tfprotov6.ProviderServer { return shortcuts.New(provider.New(version)()) }
	err := tf6server.Serve("registry.terraform.io/kubetrain/training", server, opts...)
	if err != nil {
		stopProfiles()
		log.Fatal(err.Error())
	}
}

// profileEnv names the folder where the provider writes a CPU profile of its whole life and a
// heap profile at its end, for contributors (see CONTRIBUTING in README): cpu-PID.pprof and
// heap-PID.pprof, one pair per provider process Terraform starts (a plan starts several).
const profileEnv = "TF_PROVIDER_TRAINING_PROFILE"

// profile starts the CPU profile into dir ("" profiles nothing) and returns what writes the
// heap profile and ends both; calling it again does nothing.
func profile(dir string) func() {
	if dir == "" {
		return func() {}
	}
	name := func(what string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", what, os.Getpid())) }
	cpu, err := os.Create(name("cpu"))
	if err != nil {
		log.Printf("%s: %v", profileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		log.Printf("%s: %v", profileEnv, err)
		_ = cpu.Close()
		return func() {}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			_ = cpu.Close()
			heap, err := os.Create(name("heap"))
			if err != nil {
				log.Printf("%s: %v", profileEnv, err)
				return
			}
			defer func() { _ = heap.Close() }()
			runtime.GC() // the heap as it is live at the end
			if err := pprof.WriteHeapProfile(heap); err != nil {
				log.Printf("%s: %v", profileEnv, err)
			}
		})
	}
}

// quietUnreadSDKLogs turns the plugin SDK's own loggers off when Terraform will not show provider
// logs anyway (neither TF_LOG nor TF_LOG_PROVIDER is set): they default to TRACE, and encoding
// lines that Terraform then discards took a third of the provider's CPU in a 50-job plan.
// Levels set explicitly, and every level under TF_LOG, are left alone.
func quietUnreadSDKLogs() {
	if os.Getenv("TF_LOG") != "" || os.Getenv("TF_LOG_PROVIDER") != "" {
		return
	}
	for _, env := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		if os.Getenv(env) == "" {
			_ = os.Setenv(env, "OFF")
		}
	}
}
