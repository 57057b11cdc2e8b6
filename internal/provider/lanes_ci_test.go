package provider

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// reexecEnv marks this test binary run again by TestAcceptanceTestsSkipOutsideTheirLanesUnderCI.
const reexecEnv = "TRAINING_TEST_REEXEC"

// laneEnv are the variables that ask for a lane: unset, a test of that lane skips.
var laneEnv = []string{"TF_ACC", "TRAINING_REAL_NODE", "TRAINING_RELEASE_DIR", "TRAINING_TOFU", "TF_ACC_TERRAFORM_PATH", "TRAINING_TEST_KUBECONFIG", cliLaneEnv}

// CI runs `make unit` (go test ./..., no lane asked for) with CI set; a CI run turns a skip of
// a lane's test that was asked for into a failure. Every acceptance test of this binary, run as
// make unit runs it under CI, passes or skips: none fails for a lane it was not asked for.
func TestAcceptanceTestsSkipOutsideTheirLanesUnderCI(t *testing.T) {
	if os.Getenv(reexecEnv) != "" {
		t.Skip("this binary run again")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAcc", "-test.count=1")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "CI" && !slices.Contains(laneEnv, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CI=true", reexecEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the acceptance tests, run as make unit runs them under CI: %v\n%s", err, out)
	}
}
