package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

func newCohortResource() resource.Resource {
	return &objectResource[cohortModel, *cohortModel]{typeName: "cohort", schema: cohortSchema,
		importID: func(id string) (*cohortModel, error) {
			return &cohortModel{Name: types.StringValue(id)}, clusterScopedID(id)
		}}
}

type cohortModel struct {
	ID                types.String         `tfsdk:"id"`
	Name              types.String         `tfsdk:"name"`
	Parent            types.String         `tfsdk:"parent"`
	ResourceGroup     []resourceGroupModel `tfsdk:"resource_group"`
	FairSharingWeight types.String         `tfsdk:"fair_sharing_weight"`
	Timeouts          timeouts.Value       `tfsdk:"timeouts"`
}

func cohortSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue [Cohort](https://kueue.sigs.k8s.io/docs/concepts/cohort/): a node of the tree in which " +
			"ClusterQueues borrow and lend, with a parent cohort, quotas of its own and a fair-sharing weight. A department's " +
			"GPUs are a cohort's quota, its teams' ClusterQueues name it as their `cohort`, and a cohort above the departments " +
			"lets them lend to each other within the limits each sets. A ClusterQueue may use its own quota, then what its " +
			"cohort and every cohort above it hold unused, within each level's `borrowing_limit` and `lending_limit`. A queued " +
			"job's plan predicts its admission through the whole tree. Cohorts whose parents loop make Kueue admit nothing to " +
			"the queues below them, on no condition: the plan warns of a loop with the cluster's cohorts, and `queue_problems` " +
			"finds one among those it is given. Every attribute changes in place; Kueue admits what then fits. Imported by name.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute("The Cohort's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the Cohort (cluster-scoped), which ClusterQueues name as their `cohort` and cohorts as their `parent`."},
			"parent": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule, objectNameRule},
				MarkdownDescription: "The cohort above it, which it lends to and borrows from: a `training_cohort` or a name other cohorts share. " +
					"Unset: it is a root. Changed in place."},
			"fair_sharing_weight": fairSharingWeightAttribute("cohort"),
		},
		Blocks: map[string]schema.Block{
			"timeouts":       kueueTimeouts(ctx),
			"resource_group": resourceGroupBlock("parent", 0),
		},
	}
}

func (m *cohortModel) target() kube.Target {
	return kube.Target{GVR: kueue.CohortGVR, Kind: "Cohort", Name: m.Name.ValueString()}
}

func (m *cohortModel) timeouts() timeouts.Value { return m.Timeouts }

func (m *cohortModel) setID() { m.ID = m.Name }

func (m *cohortModel) keepStatus(objectModel) {}

func (m *cohortModel) deleteHint() string {
	return "Kueue holds no Cohort: the ClusterQueues and cohorts that name it stay together under its name, without its quotas."
}

func (m *cohortModel) spec(ctx context.Context) (kueue.CohortSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.CohortSpec{Name: m.Name.ValueString(), Parent: m.Parent.ValueString(), FairSharingWeight: m.FairSharingWeight.ValueString()}
	s.ResourceGroups = resourceGroupsOf(ctx, m.ResourceGroup, &diags)
	return s, diags
}

func (m *cohortModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	s, diags := m.spec(ctx)
	if diags.HasError() {
		return nil, diags
	}
	obj, err := s.Build()
	if err != nil {
		diags.AddError("Invalid Cohort", err.Error())
	}
	return obj, diags
}

func (m *cohortModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s := kueue.ReadCohort(obj)
	m.Parent = optionalString(s.Parent)
	m.ResourceGroup = resourceGroupModels(ctx, m.ResourceGroup, s.ResourceGroups, &diags)
	m.FairSharingWeight = sameQuantity(m.FairSharingWeight, s.FairSharingWeight)
	return diags
}
