package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// Which form a variable is read in: an import takes the object's word (a job made elsewhere
// names every inline variable sensitive, jobs.readSensitiveEnv); a refresh keeps the state's, so
// that a variable the configuration moved to env after an import does not flip back; a variable
// the state has not (added elsewhere) takes the object's word there too.
func TestAVariableIsReadInTheFormTheStateGaveIt(t *testing.T) {
	ctx := context.Background()
	object := jobs.PodOptions{Image: "trainer:1", Env: map[string]string{"TOKEN": "t", "EPOCHS": "3"}, SensitiveEnv: []string{"EPOCHS", "TOKEN"}}

	imported := nullPodModel(t)
	imported.markImported()
	if diags := imported.setFromPodOptions(ctx, object); diags.HasError() {
		t.Fatal(diags)
	}
	if !imported.Env.IsNull() || len(imported.SensitiveEnv.Elements()) != 2 {
		t.Errorf("imported: env %v, sensitive_env has %d variables; want every variable sensitive", imported.Env, len(imported.SensitiveEnv.Elements()))
	}

	refreshed := nullPodModel(t)
	refreshed.Image = types.StringValue("trainer:1")
	refreshed.Env = types.MapValueMust(types.StringType, map[string]attr.Value{"EPOCHS": types.StringValue("3")})
	refreshed.SensitiveEnv = types.MapValueMust(types.StringType, map[string]attr.Value{"TOKEN": types.StringValue("t")})
	object.Env["ADDED"], object.SensitiveEnv = "a", []string{"ADDED", "EPOCHS", "TOKEN"}
	if diags := refreshed.setFromPodOptions(ctx, object); diags.HasError() {
		t.Fatal(diags)
	}
	if got := refreshed.Env.Elements(); len(got) != 1 || got["EPOCHS"] == nil {
		t.Errorf("refreshed: env %v, want EPOCHS kept plain as the state has it", refreshed.Env)
	}
	if got := refreshed.SensitiveEnv.Elements(); len(got) != 2 || got["TOKEN"] == nil || got["ADDED"] == nil {
		t.Errorf("refreshed: sensitive_env has %v, want TOKEN and ADDED", refreshed.SensitiveEnv)
	}
}

// nullPodModel is the pod attributes of a job resource's state with every attribute null.
func nullPodModel(t *testing.T) *podModel {
	t.Helper()
	ctx := context.Background()
	job := jobResourceSchemas(t)[0]
	model := job.base.base().newModel()
	state := tfsdk.State{Schema: job.sch.Schema, Raw: nullAttributes(shortcutstest.Sample(job.sch.Schema.Type().TerraformType(ctx), 0))}
	if diags := getModel(ctx, state, model); diags.HasError() {
		t.Fatal(diags)
	}
	pods, ok := model.(interface{ pod() *podModel })
	if !ok {
		t.Fatalf("%T has no pod attributes", model)
	}
	return pods.pod()
}
