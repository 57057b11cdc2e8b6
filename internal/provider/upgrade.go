package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// podSchemaVersion is the version of the schema of every resource with the pods' attributes
// (podAttributes: the job resources and training_runtime). Version 2 added the jobs' fail_fast
// and min_running_seconds; version 1 added cpu_limit,
// host_network, host_ipc, scheduler_name, termination_grace_period_seconds and
// topology_spread; version 0 is every release before, whose later ones had added
// security_context, pod_patch, roles and ssh_auth_mount_path without raising it.
const podSchemaVersion = 2

// withDefaultsUpgraders upgrade the state of every version before s's to s: each attribute the
// state lacks, added since, is given its default, which is what the provider that wrote the
// state did (an attribute is only ever added with the default that keeps what was done before).
// Without it a plan that does not refresh first (-refresh=false) would compare an added
// attribute's default with null, and show a change, or a replacement, of a job nothing changed.
// The state is read and written as JSON, so the old schema needs no copy here.
func withDefaultsUpgraders(s schema.Schema) map[int64]resource.StateUpgrader {
	out := map[int64]resource.StateUpgrader{}
	for v := range s.Version {
		out[v] = resource.StateUpgrader{StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
			upgraded, err := withDefaults(ctx, s, req.RawState.JSON)
			if err != nil {
				resp.Diagnostics.AddError("Unable to upgrade the state", fmt.Sprintf("The state of schema version %d cannot be read: %s.", v, err))
				return
			}
			resp.DynamicValue = &tfprotov6.DynamicValue{JSON: upgraded}
		}}
	}
	return out
}

// withDefaults is the state (JSON) with each top-level attribute of s it lacks set to that
// attribute's default; attributes without one stay absent, which reads as null.
func withDefaults(ctx context.Context, s schema.Schema, state []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(state))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	for name, a := range s.Attributes {
		if _, has := m[name]; has {
			continue
		}
		if v, ok := defaultOf(ctx, a); ok {
			m[name] = v
		}
	}
	return json.Marshal(m)
}

// defaultOf is a scalar attribute's static default as a JSON value.
func defaultOf(ctx context.Context, a schema.Attribute) (any, bool) {
	switch a := a.(type) {
	case schema.BoolAttribute:
		if a.Default != nil {
			var r defaults.BoolResponse
			a.Default.DefaultBool(ctx, defaults.BoolRequest{}, &r)
			return r.PlanValue.ValueBool(), !r.Diagnostics.HasError()
		}
	case schema.StringAttribute:
		if a.Default != nil {
			var r defaults.StringResponse
			a.Default.DefaultString(ctx, defaults.StringRequest{}, &r)
			return r.PlanValue.ValueString(), !r.Diagnostics.HasError()
		}
	case schema.Int64Attribute:
		if a.Default != nil {
			var r defaults.Int64Response
			a.Default.DefaultInt64(ctx, defaults.Int64Request{}, &r)
			return r.PlanValue.ValueInt64(), !r.Diagnostics.HasError()
		}
	}
	return nil, false
}

// The job resources' upgraders, from each one's own schema.
func (r *mpiJobResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return upgradersOf(ctx, r)
}

func (r *tfJobResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return upgradersOf(ctx, r)
}

func (r *pytorchJobResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return upgradersOf(ctx, r)
}

func (r *elasticJobResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return upgradersOf(ctx, r)
}

func (r *trainJobResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return upgradersOf(ctx, r)
}

func upgradersOf(ctx context.Context, r resource.Resource) map[int64]resource.StateUpgrader {
	var s resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &s)
	return withDefaultsUpgraders(s.Schema)
}
