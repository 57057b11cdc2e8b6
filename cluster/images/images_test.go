package images_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubetrain/terraform-provider-training/cluster/images"
)

// The stand-in for training-operator's PyTorchJob init container image is loaded under the name
// training-operator v1.9.0 defaults to, so that the operator runs with its defaults.
func TestPyTorchInitImageIsTrainingOperatorsDefault(t *testing.T) {
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/kubeflow/training-operator")
	list.Dir = "../components/training-operator"
	out, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(strings.TrimSpace(string(out)) + "/pkg/config/config.go")
	if err != nil {
		t.Fatal(err)
	}
	want := `PyTorchInitContainerImageDefault = "` + strings.TrimPrefix(images.PyTorchInitName, "docker.io/library/") + `"`
	if !strings.Contains(string(config), want) {
		t.Errorf("training-operator's config.go has no %s: the stand-in image is loaded under another name than its default", want)
	}
}
