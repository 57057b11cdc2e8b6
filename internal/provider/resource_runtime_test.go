package provider

import (
	"context"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var changeReplaces = regexp.MustCompile(`Changing (it|them) replaces`)

// A runtime changes in place, whatever the job resources' shared descriptions say of a job: its
// page must not say that a change replaces it, but of its name and namespace.
func TestTheRuntimesDocsSayNoChangeReplacesItButItsNameAndNamespace(t *testing.T) {
	ctx := context.Background()
	var s resource.SchemaResponse
	newRuntimeResource().Schema(ctx, resource.SchemaRequest{}, &s)
	for name, a := range s.Schema.Attributes {
		if name != "name" && name != "namespace" && changeReplaces.MatchString(a.GetMarkdownDescription()) {
			t.Errorf("training_runtime's %s says a change replaces it: %s", name, a.GetMarkdownDescription())
		}
	}
}
