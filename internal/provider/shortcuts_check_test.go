package provider

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// checkedShortcuts is the provider's server as the released binary serves it (NewProtocol6), with
// every answer a shortcut gives compared with the framework's own answer to the same request,
// from the same configured provider: each validation, unchanged plan and stored state of every
// test that runs Terraform through testProviderFactories is also a test of the shortcuts. A
// difference is recorded and fails the test binary (see failOnShortcutMismatches). Refreshes are
// not compared here (a second read of a live job may see it a moment later), but in
// TestAccDirectRead_answersEveryJobsRefreshAsTheFrameworkDoes.
type checkedShortcuts struct{ *shortcuts }

func newCheckedShortcuts() tfprotov6.ProviderServer {
	return checkedShortcuts{newShortcuts("test")}
}

var shortcutMismatches struct {
	sync.Mutex
	found []string
}

func mismatch(format string, args ...any) {
	shortcutMismatches.Lock()
	defer shortcutMismatches.Unlock()
	shortcutMismatches.found = append(shortcutMismatches.found, fmt.Sprintf(format, args...))
}

// failOnShortcutMismatches is the test binary's exit code once the differences found are
// reported: 1 if there were any.
func failOnShortcutMismatches(code int) int {
	shortcutMismatches.Lock()
	defer shortcutMismatches.Unlock()
	for _, m := range shortcutMismatches.found {
		fmt.Fprintln(os.Stderr, "a shortcut answered otherwise than the framework:", m)
	}
	if len(shortcutMismatches.found) > 0 {
		return 1
	}
	return code
}

func (s checkedShortcuts) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	got, err := s.shortcuts.ValidateResourceConfig(ctx, req)
	if err != nil {
		return got, err
	}
	if shape := s.validates[req.TypeName]; shape != nil {
		if _, answered := shape.validate(ctx, s.resourceData(), req); answered {
			want, err := s.frameworkServer.ValidateResourceConfig(ctx, req)
			if err != nil {
				return nil, err
			}
			if diff := cmp.Diff(sortedDiagnostics(want.Diagnostics), sortedDiagnostics(got.Diagnostics)); diff != "" {
				mismatch("validating a %s: diagnostics (-framework +shortcut):\n%s", req.TypeName, diff)
			}
		}
	}
	return got, nil
}

func (s checkedShortcuts) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	got, err := s.shortcuts.PlanResourceChange(ctx, req)
	if err != nil {
		return got, err
	}
	if shape := s.shapes[req.TypeName]; shape != nil {
		if _, answered := shape.plan(ctx, req); answered {
			want, err := s.frameworkServer.PlanResourceChange(ctx, req)
			if err != nil {
				return nil, err
			}
			if diff := cmp.Diff(planAnswer(want, shape), planAnswer(got, shape)); diff != "" {
				mismatch("planning a %s: (-framework +shortcut):\n%s", req.TypeName, diff)
			}
		}
	}
	return got, nil
}

func (s checkedShortcuts) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	got, err := s.shortcuts.UpgradeResourceState(ctx, req)
	if err != nil {
		return got, err
	}
	if shape := s.reads[req.TypeName]; shape != nil {
		if _, answered := shape.upgrade(req); answered {
			want, err := s.frameworkServer.UpgradeResourceState(ctx, req)
			if err != nil {
				return nil, err
			}
			w, g := dynamicString(want.UpgradedState, shape), dynamicString(got.UpgradedState, shape)
			if diff := cmp.Diff(w, g); diff != "" || len(want.Diagnostics) > 0 {
				mismatch("decoding a stored %s: (-framework +shortcut):\n%s%v", req.TypeName, diff, want.Diagnostics)
			}
		}
	}
	return got, nil
}

// planAnswer is what a plan's answer says, comparable.
func planAnswer(r *tfprotov6.PlanResourceChangeResponse, shape *planShape) map[string]any {
	identity := ""
	if r.PlannedIdentity != nil && r.PlannedIdentity.IdentityData != nil {
		identity = string(r.PlannedIdentity.IdentityData.MsgPack)
	}
	planned := "<none>"
	if r.PlannedState != nil {
		if v, err := r.PlannedState.Unmarshal(shape.state); err == nil {
			planned = v.String()
		}
	}
	return map[string]any{"planned": planned, "private": string(r.PlannedPrivate), "identity": identity,
		"replace": fmt.Sprint(r.RequiresReplace), "diagnostics": sortedDiagnostics(r.Diagnostics), "deferred": r.Deferred != nil}
}

func dynamicString(d *tfprotov6.DynamicValue, shape *readShape) string {
	if d == nil {
		return "<none>"
	}
	v, err := d.Unmarshal(shape.state)
	if err != nil {
		return err.Error()
	}
	return v.String()
}

// sortedDiagnostics are diags as comparable strings, in order (the framework walks a schema's
// attributes in a map's order).
func sortedDiagnostics(diags []*tfprotov6.Diagnostic) []string {
	out := make([]string, len(diags))
	for i, d := range diags {
		out[i] = fmt.Sprintf("%v %s: %s: %s", d.Severity, d.Attribute, d.Summary, d.Detail)
	}
	sort.Strings(out)
	return out
}
