package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// `all` is accepted with a warning that it also tolerates cordoned and unreachable nodes; `All`
// is an error that points to `all`; a bare key passes silently.
func TestTolerationStringWarnsAboutAll(t *testing.T) {
	check := func(s string) *validator.StringResponse {
		resp := &validator.StringResponse{}
		tolerationString{}.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("tolerations"), ConfigValue: types.StringValue(s)}, resp)
		return resp
	}
	if resp := check("all"); resp.Diagnostics.HasError() || resp.Diagnostics.WarningsCount() != 1 ||
		!strings.Contains(resp.Diagnostics.Warnings()[0].Detail(), "unreachable") {
		t.Errorf(`"all": %v, want one warning about cordoned and unreachable nodes`, resp.Diagnostics)
	}
	if resp := check("All"); !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), `"all", in lower case`) {
		t.Errorf(`"All": %v, want an error pointing to "all"`, resp.Diagnostics)
	}
	if resp := check("ssd_node"); len(resp.Diagnostics) != 0 {
		t.Errorf(`"ssd_node": %v, want nothing`, resp.Diagnostics)
	}
}
