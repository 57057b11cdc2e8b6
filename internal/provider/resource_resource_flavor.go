package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

func newResourceFlavorResource() resource.Resource {
	return &objectResource[flavorModel, *flavorModel]{typeName: "resource_flavor", schema: flavorSchema, importID: func(id string) (*flavorModel, error) {
		return &flavorModel{Name: types.StringValue(id)}, clusterScopedID(id)
	}}
}

type flavorModel struct {
	ID          types.String   `tfsdk:"id"`
	Name        types.String   `tfsdk:"name"`
	NodeLabels  types.Map      `tfsdk:"node_labels"`
	NodeTaints  types.List     `tfsdk:"node_taints"`
	Tolerations types.List     `tfsdk:"tolerations"`
	Topology    types.String   `tfsdk:"topology_name"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

// withTopology says whether the planned flavor names a topology: Kueue then lets neither its node
// labels nor its tolerations change, so a change of either replaces it.
func withTopology(ctx context.Context, plan tfsdk.Plan) bool {
	var topology types.String
	plan.GetAttribute(ctx, path.Root("topology_name"), &topology)
	return topology.ValueString() != ""
}

const replacedWithTopology = "With topology_name set, Kueue does not let it change, so a change replaces the flavor."

func flavorSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue [ResourceFlavor](https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/): a kind of node a quota " +
			"stands for. Kueue gives the pods it admits under this flavor its `node_labels` as a node selector and its `tolerations`, " +
			"so a queue can admit work onto tainted GPU nodes without every job repeating the tolerations. Imported by name.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute("The flavor's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the ResourceFlavor (cluster-scoped)."},
			"node_labels": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{labelMapRule},
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.MapRequest, resp *mapplanmodifier.RequiresReplaceIfFuncResponse) {
					resp.RequiresReplace = withTopology(ctx, req.Plan)
				}, replacedWithTopology, replacedWithTopology)},
				MarkdownDescription: "Labels of the nodes of this flavor, e.g. `{ \"nvidia.com/gpu.present\" = \"true\" }`: Kueue adds them to the node selector of the pods it admits here. " +
					"Required with `topology_name`. " + replacedWithTopology},
			"node_taints": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators:          []validator.List{listvalidator.ValueStringsAre(taintRule)},
				MarkdownDescription: "Taints of the nodes of this flavor, as `kubectl taint` writes them (`key=value:Effect` or `key:Effect`): a workload is admitted here only if it tolerates them (its own tolerations, or this flavor's)."},
			"tolerations": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators: []validator.List{listvalidator.ValueStringsAre(tolerationRule)},
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.ListRequest, resp *listplanmodifier.RequiresReplaceIfFuncResponse) {
					resp.RequiresReplace = withTopology(ctx, req.Plan)
				}, replacedWithTopology, replacedWithTopology)},
				MarkdownDescription: "Tolerations Kueue adds to the pods it admits under this flavor, as strings (`nvidia.com/gpu`, `key=value:Effect`, `all`), as the jobs' `tolerations`. " +
					replacedWithTopology},
			"topology_name": schema.StringAttribute{Optional: true, PlanModifiers: replaceName, Validators: kueueObjectNames,
				MarkdownDescription: "The `training_topology` of this flavor's nodes, for Topology Aware Scheduling: Kueue then places the pods it admits " +
					"here level by level of that topology (the nodes must carry its level labels and `node_labels`), and a ClusterQueue of the " +
					"flavor stays inactive while the Topology does not exist. Kueue does not let it change: a change replaces the flavor."},
		},
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *flavorModel) target() kube.Target {
	return kube.Target{GVR: kueue.ResourceFlavorGVR, Kind: "ResourceFlavor", Name: m.Name.ValueString()}
}

func (m *flavorModel) timeouts() timeouts.Value { return m.Timeouts }

func (m *flavorModel) setID() { m.ID = m.Name }

func (m *flavorModel) keepStatus(objectModel) {}

func (m *flavorModel) deleteHint() string { return kueueDeleteHint }

func (m *flavorModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.FlavorSpec{Name: m.Name.ValueString(), Topology: m.Topology.ValueString()}
	diags.Append(m.NodeLabels.ElementsAs(ctx, &s.NodeLabels, true)...)
	var taints, tolerations []string
	diags.Append(m.NodeTaints.ElementsAs(ctx, &taints, true)...)
	diags.Append(m.Tolerations.ElementsAs(ctx, &tolerations, true)...)
	for i, t := range taints {
		taint, err := jobs.ParseTaint(t)
		if err != nil {
			diags.AddAttributeError(path.Root("node_taints").AtListIndex(i), "Invalid taint", err.Error())
		}
		s.NodeTaints = append(s.NodeTaints, taint)
	}
	for i, t := range tolerations {
		toleration, err := jobs.ParseToleration(t)
		if err != nil {
			diags.AddAttributeError(path.Root("tolerations").AtListIndex(i), "Invalid toleration", err.Error())
		}
		s.Tolerations = append(s.Tolerations, toleration)
	}
	if diags.HasError() {
		return nil, diags
	}
	obj, err := s.Build()
	if err != nil {
		diags.AddError("Invalid ResourceFlavor", err.Error())
	}
	return obj, diags
}

func (m *flavorModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s, err := kueue.ReadFlavor(obj)
	if err != nil {
		diags.AddError("Error reading ResourceFlavor "+obj.GetName(), err.Error())
		return diags
	}
	m.NodeLabels = optionalMap(ctx, s.NodeLabels, &diags)
	m.Topology = optionalString(s.Topology)
	// The state's words are kept while they say what the cluster holds.
	var prior []string
	diags.Append(m.NodeTaints.ElementsAs(ctx, &prior, true)...)
	var priorTaints []corev1.Taint
	for _, t := range prior {
		taint, _ := jobs.ParseTaint(t)
		priorTaints = append(priorTaints, taint)
	}
	if !equality.Semantic.DeepEqual(priorTaints, s.NodeTaints) {
		var taints []string
		for _, t := range s.NodeTaints {
			taints = append(taints, t.ToString())
		}
		m.NodeTaints = optionalList(ctx, taints, &diags)
	}
	prior = nil
	diags.Append(m.Tolerations.ElementsAs(ctx, &prior, true)...)
	var priorTolerations []corev1.Toleration
	for _, t := range prior {
		toleration, _ := jobs.ParseToleration(t)
		priorTolerations = append(priorTolerations, toleration)
	}
	if !equality.Semantic.DeepEqual(normalTolerations(priorTolerations), normalTolerations(s.Tolerations)) {
		var tolerations []string
		for _, t := range s.Tolerations {
			str, ok := jobs.FormatToleration(t)
			if !ok {
				diags.AddError("Cannot read ResourceFlavor "+obj.GetName(), fmt.Sprintf("its toleration %+v (with tolerationSeconds) cannot be written in the tolerations grammar", t))
				continue
			}
			tolerations = append(tolerations, str)
		}
		m.Tolerations = optionalList(ctx, tolerations, &diags)
	}
	return diags
}
