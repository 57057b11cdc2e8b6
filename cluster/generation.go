package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// GenerationEnv names the generation of a test binary's own cluster, and `make cluster`'s
// (GENERATION=...): the set of versions every part of the local cluster is built at.
const GenerationEnv = "TRAINING_CLUSTER_GENERATION"

// The generations of the local cluster. Current is the default, every part at the release the
// provider is developed against (components/). Previous is the release before it of each part
// (generations/previous/), the oldest the provider supports: the modules there replace their
// namesakes under components/, and the parts it does not list (etcd, KWOK, frameworkcontroller,
// CoreDNS and the real node's images) are shared.
const (
	Current  = "current"
	Previous = "previous"
)

// Generations lists the generations by name.
var Generations = []string{Current, Previous}

// ComponentDir is the folder of the module that builds component at generation gen: the
// generation's own module when it has one, else the shared one under components/.
func ComponentDir(sourceDir, gen, component string) string {
	if gen != "" && gen != Current {
		own := filepath.Join(sourceDir, "generations", gen, component)
		if _, err := os.Stat(filepath.Join(own, "go.mod")); err == nil {
			return own
		}
	}
	return filepath.Join(sourceDir, "components", component)
}

// CheckGeneration returns gen with the empty name read as Current, or an error naming the
// generations there are.
func CheckGeneration(gen string) (string, error) {
	if gen == "" {
		return Current, nil
	}
	for _, g := range Generations {
		if g == gen {
			return gen, nil
		}
	}
	names := append([]string(nil), Generations...)
	sort.Strings(names)
	return "", fmt.Errorf("no generation %q of the local cluster: %s=%s", gen, GenerationEnv, strings.Join(names, " or "))
}
