package provider

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// podSchemaVersion is the version of the schema of every resource with the pods' attributes
// (podAttributes: the job resources and training_runtime). Version 4 added checkpoint,
// protect_running and accelerator_hours: a state of 0.1.0 lacks protect_running, whose default
// every plan would otherwise add to every job as an in-place update. Version 3 is the one
// vocabulary of v0.1.0 (renamedV3 says what moved); version 2 added the jobs' fail_fast and
// min_running_seconds; version 1 added cpu_limit, host_network, host_ipc, scheduler_name,
// termination_grace_period_seconds and topology_spread; version 0 is every release before, whose
// later ones had added security_context, pod_patch, roles and ssh_auth_mount_path without
// raising it.
const podSchemaVersion = 4

// withDefaultsUpgraders upgrade the state of every version before s's to s: the attributes that
// version 3 renamed or reshaped are carried over (renamedV3), and each attribute the state lacks,
// added since, is given its default, which is what the provider that wrote the state did (an
// attribute is only ever added with the default that keeps what was done before). Without it a
// plan that does not refresh first (-refresh=false) would compare an added attribute's default
// with null, and show a change, or a replacement, of a job nothing changed. The state is read and
// written as JSON, so the old schema needs no copy here.
func withDefaultsUpgraders(s schema.Schema) map[int64]resource.StateUpgrader {
	out := map[int64]resource.StateUpgrader{}
	for v := range s.Version {
		out[v] = resource.StateUpgrader{StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
			upgraded, err := upgradeState(ctx, s, req.RawState.JSON, v)
			if err != nil {
				resp.Diagnostics.AddError("Unable to upgrade the state", fmt.Sprintf("The state of schema version %d cannot be read: %s.", v, err))
				return
			}
			resp.DynamicValue = &tfprotov6.DynamicValue{JSON: upgraded}
		}}
	}
	return out
}

// upgradeState is the state (JSON) of an earlier version as s says it.
func upgradeState(ctx context.Context, s schema.Schema, state []byte, version int64) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(state))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if version < 3 {
		if err := renamedV3(m); err != nil {
			return nil, err
		}
	}
	for name, a := range s.Attributes {
		if _, has := m[name]; has {
			m[name] = conform(m[name], a.GetType())
			continue
		}
		if v, ok := defaultOf(ctx, a); ok {
			m[name] = v
		}
	}
	// What the schema no longer has (an attribute a kind cannot take) was null or its default.
	for name := range m {
		if _, has := s.Attributes[name]; !has && name != "timeouts" {
			delete(m, name)
		}
	}
	return json.Marshal(m)
}

// renamedV3 carries an earlier state's attributes to version 3's one vocabulary:
//   - the toleration blocks become tolerations strings (Arena's grammar says them all now);
//   - single blocks (elastic, tensorboard, a runtime's mpi and gang_scheduling) become objects;
//   - scheduling_policy becomes gang_scheduling, its queue volcano_queue, its priority_class
//     priority_class_name;
//   - slots_per_worker becomes processes_per_worker;
//   - launcher_cpu, launcher_memory, ps_cpu, ps_memory, etcd_cpu, etcd_memory and a non-default
//     etcd_image become their role's settings in roles;
//   - an elastic job's min_workers and max_workers become its elastic, its command its
//     worker_command;
//   - an elastic PyTorchJob made without max_restarts has torchrun's 0.
func renamedV3(m map[string]any) error {
	if blocks, ok := m["toleration"].([]any); ok {
		strs, _ := m["tolerations"].([]any)
		for _, b := range blocks {
			t, err := tolerationOfBlock(b)
			if err != nil {
				return err
			}
			s, ok := jobs.FormatToleration(t)
			if !ok {
				return fmt.Errorf("toleration %+v has no string form: say it in pod_patch", t)
			}
			strs = append(strs, s)
		}
		if len(strs) > 0 {
			m["tolerations"] = strs
		}
	}
	delete(m, "toleration")
	for _, name := range []string{"elastic", "tensorboard", "mpi", "gang_scheduling"} {
		if l, ok := m[name].([]any); ok {
			m[name] = nil
			if len(l) > 0 {
				m[name] = l[0]
			}
		}
	}
	if p, ok := m["scheduling_policy"].(map[string]any); ok {
		m["gang_scheduling"] = map[string]any{"min_available": p["min_available"], "volcano_queue": p["queue"],
			"priority_class_name": p["priority_class"], "schedule_timeout_seconds": p["schedule_timeout_seconds"]}
	}
	delete(m, "scheduling_policy")
	if v, ok := m["slots_per_worker"]; ok {
		m["processes_per_worker"] = v
		delete(m, "slots_per_worker")
	}
	if image, ok := m["etcd_image"].(string); ok && image == jobs.DefaultEtcdImage {
		delete(m, "etcd_image")
	}
	for old, at := range map[string][2]string{"launcher_cpu": {"launcher", "cpu"}, "launcher_memory": {"launcher", "memory"},
		"ps_cpu": {"ps", "cpu"}, "ps_memory": {"ps", "memory"}, "etcd_image": {"etcd", "image"}, "etcd_cpu": {"etcd", "cpu"},
		"etcd_memory": {"etcd", "memory"}} {
		v, ok := m[old]
		delete(m, old)
		if !ok || v == nil {
			continue
		}
		roles, _ := m["roles"].(map[string]any)
		if roles == nil {
			roles = map[string]any{}
		}
		role, _ := roles[at[0]].(map[string]any)
		if role == nil {
			role = map[string]any{}
		}
		role[at[1]] = v
		roles[at[0]] = role
		m["roles"] = roles
	}
	if _, elasticJob := m["max_workers"]; elasticJob {
		m["elastic"] = map[string]any{"min_workers": m["min_workers"], "max_workers": m["max_workers"]}
		delete(m, "min_workers")
		delete(m, "max_workers")
		m["worker_command"] = m["command"]
		delete(m, "command")
	}
	if e, ok := m["elastic"].(map[string]any); ok {
		if _, pytorch := e["rendezvous_backend"]; pytorch && e["max_restarts"] == nil {
			e["max_restarts"] = json.Number("0")
		}
	}
	return nil
}

// tolerationOfBlock reads a toleration block of an earlier state.
func tolerationOfBlock(b any) (corev1.Toleration, error) {
	m, ok := b.(map[string]any)
	if !ok {
		return corev1.Toleration{}, fmt.Errorf("a toleration block of the state is %T", b)
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	t := corev1.Toleration{Key: str("key"), Operator: corev1.TolerationOperator(cmp.Or(str("operator"), string(corev1.TolerationOpEqual))),
		Value: str("value"), Effect: corev1.TaintEffect(str("effect"))}
	if n, ok := m["toleration_seconds"].(json.Number); ok {
		secs, err := n.Int64()
		if err != nil {
			return t, err
		}
		t.TolerationSeconds = &secs
	}
	return t, nil
}

// conform gives an object of the state, at every depth, each attribute its type has that it
// lacks (null), as a state of the type must hold them all.
func conform(v any, t attr.Type) any {
	switch t := t.(type) {
	case attr.TypeWithAttributeTypes:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for name, at := range t.AttributeTypes() {
			if inner, has := m[name]; has {
				m[name] = conform(inner, at)
			} else {
				m[name] = nil
			}
		}
		return m
	case attr.TypeWithElementType:
		switch c := v.(type) {
		case []any:
			for i := range c {
				c[i] = conform(c[i], t.ElementType())
			}
		case map[string]any:
			for k := range c {
				c[k] = conform(c[k], t.ElementType())
			}
		}
	}
	return v
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
