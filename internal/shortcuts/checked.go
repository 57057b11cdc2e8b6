package shortcuts

import (
	"context"
	"fmt"
	"sort"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Checked serves p with the shortcuts, and compares every answer a shortcut gives with the
// framework's own answer to the same request, from the same configured provider: report is
// told each difference. The acceptance suite's provider server is Checked, so each validation,
// unchanged plan and stored state of every test is also a test of the shortcuts; Env=check
// serves it with the differences logged. Refreshes are not compared (a second read of a live
// job may see it a moment later); the acceptance suite compares them on jobs that stand still.
func Checked(p provider.Provider, report func(ctx context.Context, difference string)) tfprotov6.ProviderServer {
	return checked{server: newServer(p), report: report}
}

type checked struct {
	*server
	report func(context.Context, string)
}

func (s checked) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	got, err := s.server.ValidateResourceConfig(ctx, req)
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
				mismatchf(ctx, s.report, "validating a %s: diagnostics (-framework +shortcut):\n%s", req.TypeName, diff)
			}
		}
	}
	return got, nil
}

func (s checked) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	got, err := s.server.PlanResourceChange(ctx, req)
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
				mismatchf(ctx, s.report, "planning a %s: (-framework +shortcut):\n%s", req.TypeName, diff)
			}
		}
	}
	return got, nil
}

func (s checked) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	got, err := s.server.UpgradeResourceState(ctx, req)
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
				mismatchf(ctx, s.report, "decoding a stored %s: (-framework +shortcut):\n%s%v", req.TypeName, diff, want.Diagnostics)
			}
		}
	}
	return got, nil
}

func mismatchf(ctx context.Context, report func(context.Context, string), format string, args ...any) {
	report(ctx, fmt.Sprintf(format, args...))
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
