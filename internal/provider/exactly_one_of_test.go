package provider

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// exactlyOneOf describes itself and answers every configuration of an elastic job's script and
// command (one, both, neither, either unknown) as resourcevalidator.ExactlyOneOf does.
func TestExactlyOneOfSaysWhatTheValidatorsExactlyOneOfSays(t *testing.T) {
	ctx := context.Background()
	var sch resource.SchemaResponse
	(&elasticJobResource{}).Schema(ctx, resource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx)
	base := nullAttributes(shortcutstest.Sample(typ, 0))
	commands := tftypes.List{ElementType: tftypes.String}
	script := map[string]tftypes.Value{
		"set": tftypes.NewValue(tftypes.String, "train.py"), "null": tftypes.NewValue(tftypes.String, nil),
		"unknown": tftypes.NewValue(tftypes.String, tftypes.UnknownValue),
	}
	command := map[string]tftypes.Value{
		"set": tftypes.NewValue(commands, []tftypes.Value{tftypes.NewValue(tftypes.String, "torchrun")}), "null": tftypes.NewValue(commands, nil),
		"unknown": tftypes.NewValue(commands, tftypes.UnknownValue),
	}
	ours := exactlyOneOf{"script", "worker_command"}
	theirs := resourcevalidator.ExactlyOneOf(path.MatchRoot("script"), path.MatchRoot("worker_command"))
	if ours.Description(ctx) != theirs.Description(ctx) || ours.MarkdownDescription(ctx) != theirs.MarkdownDescription(ctx) {
		t.Errorf("described as %q, the framework's validator as %q", ours.Description(ctx), theirs.Description(ctx))
	}
	for s, sv := range script {
		for c, cv := range command {
			config := tfsdk.Config{Schema: sch.Schema, Raw: shortcutstest.WithAttribute(shortcutstest.WithAttribute(base, "script", sv), "worker_command", cv)}
			var got, want resource.ValidateConfigResponse
			ours.ValidateResource(ctx, resource.ValidateConfigRequest{Config: config}, &got)
			theirs.ValidateResource(ctx, resource.ValidateConfigRequest{Config: config}, &want)
			if diff := cmp.Diff(want.Diagnostics, got.Diagnostics); diff != "" {
				t.Errorf("script %s, command %s (-resourcevalidator +exactlyOneOf):\n%s", s, c, diff)
			}
		}
	}
}
