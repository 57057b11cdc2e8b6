package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// A create that stops while it waits for what the job needs (Terraform interrupted, or the create
// timeout ran out) says so: it did not wait the need out, so it cannot say that the need is
// missing or how long it waited.
func TestAwaitNeedStoppedByItsContextSaysWhyInsteadOfWaitedOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, func())
		stop func(cancel func())
		want string
	}{
		{"interrupted", func() (context.Context, func()) { return context.WithCancel(context.Background()) },
			func(cancel func()) { cancel() }, "until Terraform interrupted the apply"},
		{"timeout", func() (context.Context, func()) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		},
			func(func()) {}, "until the create timeout ran out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			looks := 0
			found, err := awaitNeed(ctx, func(context.Context) (bool, error) {
				looks++
				tc.stop(cancel)
				return false, nil
			})
			if found || err == nil {
				t.Fatalf("awaitNeed = %v, %v after %d looks; want not found and the stop as its error", found, err, looks)
			}
			var diags diag.Diagnostics
			if !interruptedWaiting(path.Root("queue_name"), "LocalQueue ml/team-a", err, &diags) {
				t.Fatalf("interruptedWaiting does not take %v for a stop", err)
			}
			detail := diags.Errors()[0].Detail()
			for _, want := range []string{tc.want, "LocalQueue ml/team-a", "Nothing was created"} {
				if !strings.Contains(detail, want) {
					t.Errorf("the error says %q; want it to say %q", detail, want)
				}
			}
			if strings.Contains(detail, "seconds") {
				t.Errorf("the error says how long the create waited, which it did not: %q", detail)
			}
		})
	}
	// Any other error is not a stop.
	var diags diag.Diagnostics
	if interruptedWaiting(path.Root("runtime"), "x", errors.New("forbidden"), &diags) || diags.HasError() {
		t.Errorf("interruptedWaiting takes an API error for a stop: %v", diags)
	}
}
