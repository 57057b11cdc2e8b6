package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

func newTopologyResource() resource.Resource {
	return &objectResource[topologyModel, *topologyModel]{typeName: "topology", schema: topologySchema, importID: func(id string) (*topologyModel, error) {
		return &topologyModel{Name: types.StringValue(id)}, clusterScopedID(id)
	}}
}

type topologyModel struct {
	ID       types.String   `tfsdk:"id"`
	Name     types.String   `tfsdk:"name"`
	Levels   types.List     `tfsdk:"levels"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func topologySchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue [Topology](https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/): the levels of the " +
			"data centre's hierarchy (blocks, racks, hosts) as node labels, for Topology Aware Scheduling. A `training_resource_flavor` " +
			"names it with `topology_name`; Kueue then admits the workloads of that flavor onto nodes it picks level by level, so that " +
			"a job's pods stay close. Kueue does not let the levels change: a change replaces the Topology, and Kueue keeps it while a " +
			"flavor names it, so give each such flavor `lifecycle { replace_triggered_by = [training_topology.NAME] }` (as in the example) " +
			"to replace it too. Imported by name.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute("The Topology's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the Topology (cluster-scoped)."},
			"levels": schema.ListAttribute{ElementType: types.StringType, Required: true,
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
				Validators:    []validator.List{listvalidator.SizeBetween(1, 16), listvalidator.UniqueValues(), listvalidator.ValueStringsAre(labelKeyRule)},
				MarkdownDescription: "The node labels of the levels, from the widest to the narrowest, e.g. `[\"cloud.example.com/block\", " +
					"\"cloud.example.com/rack\", \"kubernetes.io/hostname\"]`: 1 to 16, unique, and `kubernetes.io/hostname` only as the last."},
		},
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *topologyModel) target() kube.Target {
	return kube.Target{GVR: kueue.TopologyGVR, Kind: "Topology", Name: m.Name.ValueString()}
}

func (m *topologyModel) timeouts() timeouts.Value { return m.Timeouts }

func (m *topologyModel) setID() { m.ID = m.Name }

func (m *topologyModel) keepStatus(objectModel) {}

func (m *topologyModel) deleteHint() string {
	return "Kueue keeps a Topology while a ResourceFlavor names it (its finalizer kueue.x-k8s.io/resource-in-use): a flavor that " +
		"names it must go first. To replace a Topology, replace its flavors with it: lifecycle { replace_triggered_by = [training_topology.NAME] } on each."
}

func (m *topologyModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.TopologySpec{Name: m.Name.ValueString()}
	diags.Append(m.Levels.ElementsAs(ctx, &s.Levels, false)...)
	if diags.HasError() {
		return nil, diags
	}
	obj, err := s.Build()
	if err != nil {
		diags.AddError("Invalid Topology", err.Error())
	}
	return obj, diags
}

func (m *topologyModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s, err := kueue.ReadTopology(obj)
	if err != nil {
		diags.AddError("Error reading Topology "+obj.GetName(), err.Error())
		return diags
	}
	m.Levels = optionalList(ctx, s.Levels, &diags)
	return diags
}
