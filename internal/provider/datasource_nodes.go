package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

var _ datasource.DataSourceWithConfigure = (*nodesDataSource)(nil)

func newNodesDataSource() datasource.DataSource { return &nodesDataSource{} }

type nodesDataSource struct {
	client *kube.Client
}

type nodesModel struct {
	LabelSelector   types.String `tfsdk:"label_selector"`
	TaintKey        types.String `tfsdk:"taint_key"`
	GPUResourceName types.String `tfsdk:"gpu_resource_name"`
	Nodes           types.List   `tfsdk:"nodes"`
}

var nodeType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name":               types.StringType,
	"labels":             types.MapType{ElemType: types.StringType},
	"taints":             types.ListType{ElemType: types.StringType},
	"gpu_capacity":       types.Int64Type,
	"gpu_allocatable":    types.Int64Type,
	"cpu_allocatable":    types.StringType,
	"memory_allocatable": types.StringType,
	"ready":              types.BoolType,
	"schedulable":        types.BoolType,
}}

func (d *nodesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_nodes"
}

var labelSelectorRule = stringRule{"label selector", func(s string) error {
	_, err := labels.Parse(s)
	return err
}}

func (d *nodesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The cluster's nodes with their labels, taints, GPUs and readiness: `kubectl get nodes` for training, " +
			"and what a configuration needs to compute where a job could land.",
		Attributes: map[string]schema.Attribute{
			"label_selector": schema.StringAttribute{Optional: true, Validators: []validator.String{labelSelectorRule},
				MarkdownDescription: "Only nodes matching this label selector, e.g. `nvidia.com/gpu.present=true`."},
			"taint_key": schema.StringAttribute{Optional: true, Validators: []validator.String{labelKeyRule},
				MarkdownDescription: "Only nodes with a taint of this key, e.g. `nvidia.com/gpu`."},
			"gpu_resource_name": schema.StringAttribute{Optional: true, Validators: []validator.String{gpuResourceRule},
				MarkdownDescription: "Extended resource counted as GPUs. Default `" + jobs.DefaultGPUResource + "`."},
			"nodes": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The nodes, sorted by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":               schema.StringAttribute{Computed: true, MarkdownDescription: "Node name."},
					"labels":             schema.MapAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "Node labels."},
					"taints":             schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "Taints as `key=value:Effect`, the form `kubectl taint` and the `tolerations` attribute use."},
					"gpu_capacity":       schema.Int64Attribute{Computed: true, MarkdownDescription: "GPUs the node has."},
					"gpu_allocatable":    schema.Int64Attribute{Computed: true, MarkdownDescription: "GPUs pods may request."},
					"cpu_allocatable":    schema.StringAttribute{Computed: true, MarkdownDescription: "Allocatable CPU as a Kubernetes quantity."},
					"memory_allocatable": schema.StringAttribute{Computed: true, MarkdownDescription: "Allocatable memory as a Kubernetes quantity."},
					"ready":              schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the node's Ready condition is True."},
					"schedulable":        schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether new pods may be scheduled there (not cordoned: `spec.unschedulable` is false). Plans check jobs against the nodes that are Ready and schedulable (`placement_check`)."},
				}},
			},
		},
	}
}

func (d *nodesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *nodesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m nodesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	list, err := d.client.Nodes(ctx, m.LabelSelector.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Error reading nodes", err.Error())
		return
	}
	values := []attr.Value{}
	for _, n := range jobs.SummarizeNodes(list, m.GPUResourceName.ValueString(), jobs.NodeFilter{TaintKey: m.TaintKey.ValueString()}) {
		labelValues, diags := types.MapValueFrom(ctx, types.StringType, n.Labels)
		resp.Diagnostics.Append(diags...)
		taints, diags := types.ListValueFrom(ctx, types.StringType, append([]string{}, n.Taints...))
		resp.Diagnostics.Append(diags...)
		v, diags := types.ObjectValue(nodeType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(n.Name), "labels": labelValues, "taints": taints,
			"gpu_capacity": types.Int64Value(n.GPUCapacity), "gpu_allocatable": types.Int64Value(n.GPUAllocatable),
			"cpu_allocatable": types.StringValue(n.CPUAllocatable), "memory_allocatable": types.StringValue(n.MemoryAllocatable),
			"ready":       types.BoolValue(n.Ready),
			"schedulable": types.BoolValue(n.Schedulable),
		})
		resp.Diagnostics.Append(diags...)
		values = append(values, v)
	}
	list2, diags := types.ListValue(nodeType, values)
	resp.Diagnostics.Append(diags...)
	m.Nodes = list2
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
