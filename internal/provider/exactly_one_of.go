package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/helpers/validatordiag"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// exactlyOneOf is resourcevalidator.ExactlyOneOf for top-level attributes, which it reads
// straight from the configuration's value: that validator matches its paths by walking every
// value of the configuration, and for an elastic job's two attributes that walk was an eighth
// of what a plan of 1,000 jobs allocated. Its descriptions and diagnostics are that
// validator's (TestExactlyOneOfSaysWhatTheValidatorsExactlyOneOfSays).
type exactlyOneOf []string

var _ resource.ConfigValidator = exactlyOneOf{}

func (v exactlyOneOf) Description(ctx context.Context) string { return v.MarkdownDescription(ctx) }

func (v exactlyOneOf) MarkdownDescription(context.Context) string {
	expressions := make(path.Expressions, len(v))
	for i, name := range v {
		expressions[i] = path.MatchRoot(name)
	}
	return fmt.Sprintf("Exactly one of these attributes must be configured: %s", expressions)
}

func (v exactlyOneOf) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var vals map[string]tftypes.Value
	if err := req.Config.Raw.As(&vals); err != nil {
		resp.Diagnostics.AddError("Invalid configuration", err.Error())
		return
	}
	var configured path.Paths
	unknown := false
	for _, name := range v {
		switch value := vals[name]; {
		case !value.IsKnown():
			unknown = true
		case !value.IsNull():
			configured = append(configured, path.Root(name))
		}
	}
	if len(configured) > 1 {
		resp.Diagnostics.Append(validatordiag.InvalidAttributeCombinationDiagnostic(configured[0], v.Description(ctx)))
	}
	if !unknown && len(configured) == 0 {
		resp.Diagnostics.Append(diag.NewErrorDiagnostic("Missing Attribute Configuration", v.Description(ctx)))
	}
}
