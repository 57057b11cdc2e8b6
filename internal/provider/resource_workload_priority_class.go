package provider

import (
	"context"
	"math"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

func newWorkloadPriorityClassResource() resource.Resource {
	return &objectResource[priorityClassModel, *priorityClassModel]{typeName: "workload_priority_class", schema: priorityClassSchema,
		importID: func(id string) (*priorityClassModel, error) {
			return &priorityClassModel{Name: types.StringValue(id)}, clusterScopedID(id)
		}}
}

type priorityClassModel struct {
	ID          types.String   `tfsdk:"id"`
	Name        types.String   `tfsdk:"name"`
	Value       types.Int64    `tfsdk:"value"`
	Description types.String   `tfsdk:"description"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

func priorityClassSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue [WorkloadPriorityClass](https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/): a " +
			"priority for Kueue's queueing and preemption alone, apart from the pods' PriorityClass (which also decides the " +
			"scheduler's preemption of pods). A queued job names one in its `workload_priority_class`; Kueue " +
			"orders the queue's workloads by it and, where the ClusterQueue preempts by priority, evicts lower ones for higher. " +
			"Kueue gives a workload the class's value when it makes the workload: a new value reaches the jobs submitted after it, " +
			"not those already queued or running. Imported by name.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute("The WorkloadPriorityClass's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the WorkloadPriorityClass (cluster-scoped)."},
			"value": schema.Int64Attribute{Required: true,
				Validators: []validator.Int64{int64validator.Between(math.MinInt32, math.MaxInt32)},
				MarkdownDescription: "The priority: higher goes first. A 32-bit integer. Changed in place; the Workloads Kueue made " +
					"before the change keep the value they were given."},
			"description": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.LengthBetween(1, 2048)},
				MarkdownDescription: "When to use it, for the people who choose a job's class. At most 2048 characters. Changed in place."},
		},
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *priorityClassModel) target() kube.Target {
	return kube.Target{GVR: kueue.WorkloadPriorityClassGVR, Kind: "WorkloadPriorityClass", Name: m.Name.ValueString()}
}

func (m *priorityClassModel) timeouts() timeouts.Value { return m.Timeouts }

func (m *priorityClassModel) setID() { m.ID = m.Name }

func (m *priorityClassModel) keepStatus(objectModel) {}

func (m *priorityClassModel) deleteHint() string {
	return "Kueue does not hold a WorkloadPriorityClass: the Workloads that took its value keep it."
}

func (m *priorityClassModel) build(context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj, err := kueue.WorkloadPriorityClassSpec{Name: m.Name.ValueString(), Value: m.Value.ValueInt64(), Description: m.Description.ValueString()}.Build()
	if err != nil {
		diags.AddError("Invalid WorkloadPriorityClass", err.Error())
	}
	return obj, diags
}

func (m *priorityClassModel) read(_ context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s, err := kueue.ReadWorkloadPriorityClass(obj)
	if err != nil {
		diags.AddError("Error reading WorkloadPriorityClass "+obj.GetName(), err.Error())
		return diags
	}
	m.Value = types.Int64Value(s.Value)
	m.Description = types.StringNull()
	if s.Description != "" {
		m.Description = types.StringValue(s.Description)
	}
	return diags
}
