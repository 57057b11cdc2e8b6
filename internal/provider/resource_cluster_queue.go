package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

func newClusterQueueResource() resource.Resource {
	return &objectResource[clusterQueueModel, *clusterQueueModel]{typeName: "cluster_queue", schema: clusterQueueSchema, importID: func(id string) (*clusterQueueModel, error) {
		return &clusterQueueModel{Name: types.StringValue(id)}, clusterScopedID(id)
	}}
}

type clusterQueueModel struct {
	ID                types.String         `tfsdk:"id"`
	Name              types.String         `tfsdk:"name"`
	Cohort            types.String         `tfsdk:"cohort"`
	AdmissionChecks   types.List           `tfsdk:"admission_checks"`
	NamespaceSelector types.Map            `tfsdk:"namespace_selector"`
	QueueingStrategy  types.String         `tfsdk:"queueing_strategy"`
	StopPolicy        types.String         `tfsdk:"stop_policy"`
	ResourceGroup     []resourceGroupModel `tfsdk:"resource_group"`
	Preemption        []preemptionModel    `tfsdk:"preemption"`
	FairSharingWeight types.String         `tfsdk:"fair_sharing_weight"`
	queueStatusModel
	Usage    types.Map      `tfsdk:"usage"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

type resourceGroupModel struct {
	CoveredResources types.List          `tfsdk:"covered_resources"`
	Flavor           []flavorQuotasModel `tfsdk:"flavor"`
}

type flavorQuotasModel struct {
	Name     types.String `tfsdk:"name"`
	Resource []quotaModel `tfsdk:"resource"`
}

type quotaModel struct {
	Name           types.String `tfsdk:"name"`
	NominalQuota   types.String `tfsdk:"nominal_quota"`
	BorrowingLimit types.String `tfsdk:"borrowing_limit"`
	LendingLimit   types.String `tfsdk:"lending_limit"`
}

type preemptionModel struct {
	ReclaimWithinCohort  types.String `tfsdk:"reclaim_within_cohort"`
	WithinClusterQueue   types.String `tfsdk:"within_cluster_queue"`
	BorrowWithinCohort   types.String `tfsdk:"borrow_within_cohort"`
	MaxPriorityThreshold types.Int64  `tfsdk:"max_priority_threshold"`
}

func clusterQueueSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue [ClusterQueue](https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/): quotas of GPUs, CPU and memory " +
			"per flavor, the cohort it borrows from and lends to, and when its workloads preempt others. Jobs reach it through a " +
			"`training_local_queue` and their `queue_name`. Its status (workloads pending and admitted, quota in use) is read on every refresh. " +
			"Changing a quota updates it in place, and Kueue admits what now fits. Imported by name.",
		Attributes: queueStatusAttributes(map[string]schema.Attribute{
			"id":   idAttribute("The ClusterQueue's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the ClusterQueue (cluster-scoped)."},
			"cohort": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule, objectNameRule},
				MarkdownDescription: "Cohort the queue belongs to: queues of one cohort borrow each other's unused quota. It may name a " +
					"`training_cohort`, whose own quotas and parent cohorts the queue then borrows from too, or just a name the queues share."},
			"fair_sharing_weight": fairSharingWeightAttribute("queue"),
			"admission_checks": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators: []validator.List{listvalidator.SizeBetween(1, 64), listvalidator.UniqueValues(), listvalidator.ValueStringsAre(nonBlankRule)},
				MarkdownDescription: "AdmissionChecks every workload of the queue must pass once it has its quota, by name " +
					"(`spec.admissionChecksStrategy`): a `training_admission_check` of MultiKueue dispatches the queue's jobs to its worker clusters."},
			"namespace_selector": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{labelMapRule},
				MarkdownDescription: "Labels a namespace must have for its LocalQueues to submit here. Unset: every namespace."},
			"queueing_strategy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(kueue.QueueingStrategies[0]),
				Validators:          []validator.String{stringvalidator.OneOf(kueue.QueueingStrategies...)},
				MarkdownDescription: "`BestEffortFIFO` (default: a workload that does not fit lets the next one in) or `StrictFIFO`."},
			"stop_policy": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: keepString,
				Validators:          []validator.String{stringvalidator.OneOf(kueue.StopPolicies...)},
				MarkdownDescription: "`None`, `Hold` (admit nothing new) or `HoldAndDrain` (also evict what runs)." + stopPolicyUnset},
			"usage": schema.MapAttribute{ElementType: types.StringType, Computed: true, PlanModifiers: keepMap,
				MarkdownDescription: "Quota in use at the last refresh, by `FLAVOR/RESOURCE`, e.g. `{ \"gpu/nvidia.com/gpu\" = \"2\" }`."},
		}),
		Blocks: map[string]schema.Block{
			"timeouts":       kueueTimeouts(ctx),
			"resource_group": resourceGroupBlock("cohort", 1),
			"preemption": schema.ListNestedBlock{
				MarkdownDescription: "When this queue's pending workloads may preempt admitted ones. Unset: never.",
				Validators:          []validator.List{listvalidator.SizeAtMost(1)},
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"reclaim_within_cohort": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("Never"),
						Validators:          []validator.String{stringvalidator.OneOf(kueue.ReclaimPolicies...)},
						MarkdownDescription: "Whether it takes back its lent quota by preempting the cohort's borrowers: `Never` (default), `LowerPriority` or `Any`."},
					"within_cluster_queue": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("Never"),
						Validators:          []validator.String{stringvalidator.OneOf(kueue.WithinClusterQueuePolicies...)},
						MarkdownDescription: "Whether it preempts its own admitted workloads of lower priority: `Never` (default), `LowerPriority` or `LowerOrNewerEqualPriority`."},
					"borrow_within_cohort": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("Never"),
						Validators:          []validator.String{stringvalidator.OneOf(kueue.BorrowWithinCohortPolicies...)},
						MarkdownDescription: "Whether it preempts the cohort's lower-priority workloads to borrow: `Never` (default) or `LowerPriority`."},
					"max_priority_threshold": schema.Int64Attribute{Optional: true,
						MarkdownDescription: "With `borrow_within_cohort`, only workloads of at most this priority are preempted."},
				}},
			},
		},
	}
}

func (m *clusterQueueModel) target() kube.Target {
	return kube.Target{GVR: kueue.ClusterQueueGVR, Kind: "ClusterQueue", Name: m.Name.ValueString()}
}

func (m *clusterQueueModel) timeouts() timeouts.Value { return m.Timeouts }

func (m *clusterQueueModel) deleteHint() string { return kueueDeleteHint }

func (m *clusterQueueModel) setID() { m.ID = m.Name }

func (m *clusterQueueModel) keepStatus(prior objectModel) {
	if p, ok := prior.(*clusterQueueModel); ok {
		m.queueStatusModel, m.Usage = p.queueStatusModel, p.Usage
	}
}

func (m *clusterQueueModel) spec(ctx context.Context) (kueue.ClusterQueueSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.ClusterQueueSpec{Name: m.Name.ValueString(), Cohort: m.Cohort.ValueString(),
		QueueingStrategy: m.QueueingStrategy.ValueString(), StopPolicy: m.StopPolicy.ValueString(), FairSharingWeight: m.FairSharingWeight.ValueString()}
	diags.Append(m.NamespaceSelector.ElementsAs(ctx, &s.NamespaceSelector, true)...)
	diags.Append(m.AdmissionChecks.ElementsAs(ctx, &s.AdmissionChecks, true)...)
	s.ResourceGroups = resourceGroupsOf(ctx, m.ResourceGroup, &diags)
	for _, p := range m.Preemption {
		s.Preemption = kueue.Preemption{ReclaimWithinCohort: p.ReclaimWithinCohort.ValueString(),
			WithinClusterQueue: p.WithinClusterQueue.ValueString(), BorrowWithinCohort: p.BorrowWithinCohort.ValueString()}
		if !p.MaxPriorityThreshold.IsNull() && !p.MaxPriorityThreshold.IsUnknown() {
			v := int32(p.MaxPriorityThreshold.ValueInt64())
			s.Preemption.MaxPriorityThreshold = &v
		}
	}
	return s, diags
}

func (m *clusterQueueModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	s, diags := m.spec(ctx)
	if diags.HasError() {
		return nil, diags
	}
	obj, err := s.Build()
	if err != nil {
		diags.AddError("Invalid ClusterQueue", err.Error())
	}
	return obj, diags
}

func (m *clusterQueueModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	s, err := kueue.ReadClusterQueue(obj)
	if err != nil {
		diags.AddError("Error reading ClusterQueue "+obj.GetName(), err.Error())
		return diags
	}
	m.Cohort = optionalString(s.Cohort)
	m.AdmissionChecks = optionalList(ctx, s.AdmissionChecks, &diags)
	m.NamespaceSelector = optionalMap(ctx, s.NamespaceSelector, &diags)
	m.QueueingStrategy = types.StringValue(s.QueueingStrategy)
	m.StopPolicy = types.StringValue(s.StopPolicy)
	m.ResourceGroup = resourceGroupModels(ctx, m.ResourceGroup, s.ResourceGroups, &diags)
	m.FairSharingWeight = sameQuantity(m.FairSharingWeight, s.FairSharingWeight)
	p := s.Preemption
	// An unset block reads as unset while the cluster holds the defaults it stands for.
	if len(m.Preemption) > 0 || p.ReclaimWithinCohort != "Never" || p.WithinClusterQueue != "Never" || p.BorrowWithinCohort != "Never" || p.MaxPriorityThreshold != nil {
		pm := preemptionModel{ReclaimWithinCohort: types.StringValue(p.ReclaimWithinCohort), WithinClusterQueue: types.StringValue(p.WithinClusterQueue),
			BorrowWithinCohort: types.StringValue(p.BorrowWithinCohort), MaxPriorityThreshold: types.Int64Null()}
		if p.MaxPriorityThreshold != nil {
			pm.MaxPriorityThreshold = types.Int64Value(int64(*p.MaxPriorityThreshold))
		}
		m.Preemption = []preemptionModel{pm}
	}
	st := kueue.ReadQueueStatus(obj)
	m.set(st)
	usage := map[string]attr.Value{}
	for k, v := range st.Usage {
		usage[k] = types.StringValue(v)
	}
	m.Usage = types.MapValueMust(types.StringType, usage)
	return diags
}

// resourceGroupBlock is the resource_group block of a ClusterQueue or Cohort: lender is the
// attribute naming what its limits borrow from and lend to, min the fewest groups it takes.
func resourceGroupBlock(lender string, minGroups int) schema.ListNestedBlock {
	quantity := []validator.String{quotaRule}
	lends := "How much of its unused quota it lends to its " + lender + ". Unset: all of it. Needs a `" + lender + "`."
	if lender == "parent" {
		lends = "How much of its subtree's unused quota (its own and its children's) it lends to its parent; it may exceed " +
			"`nominal_quota`. Unset: all of it. Needs a `parent`."
	}
	return schema.ListNestedBlock{
		MarkdownDescription: "Resources whose quotas are given together, per flavor, in order of preference.",
		Validators:          []validator.List{listvalidator.SizeAtLeast(minGroups)},
		NestedObject: schema.NestedBlockObject{
			Attributes: map[string]schema.Attribute{
				"covered_resources": schema.ListAttribute{ElementType: types.StringType, Required: true,
					Validators:          []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
					MarkdownDescription: "Resources this group covers, e.g. `[\"cpu\", \"memory\", \"nvidia.com/gpu\"]`; each flavor gives a quota for each, in this order."},
			},
			Blocks: map[string]schema.Block{
				"flavor": schema.ListNestedBlock{
					MarkdownDescription: "A flavor's quotas, tried in the order written.",
					Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
					NestedObject: schema.NestedBlockObject{
						Attributes: map[string]schema.Attribute{
							"name": schema.StringAttribute{Required: true, Validators: kueueObjectNames, MarkdownDescription: "The ResourceFlavor's name."},
						},
						Blocks: map[string]schema.Block{
							"resource": schema.ListNestedBlock{
								MarkdownDescription: "One resource's quota in this flavor.",
								NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
									"name":            schema.StringAttribute{Required: true, MarkdownDescription: "The resource, e.g. `nvidia.com/gpu`."},
									"nominal_quota":   schema.StringAttribute{Required: true, Validators: quantity, MarkdownDescription: "The quota it owns, as a Kubernetes quantity (`2`, `64Gi`)."},
									"borrowing_limit": schema.StringAttribute{Optional: true, Validators: quantity, MarkdownDescription: "How much more it may borrow from its " + lender + ". Unset: no limit. Needs a `" + lender + "`."},
									"lending_limit":   schema.StringAttribute{Optional: true, Validators: quantity, MarkdownDescription: lends},
								}},
							},
						},
					},
				},
			},
		},
	}
}

// fairSharingWeightAttribute is the fair_sharing_weight of a ClusterQueue or Cohort (what).
func fairSharingWeightAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Validators: []validator.String{quotaRule},
		MarkdownDescription: "Its weight under Kueue's fair sharing (`spec.fairSharing.weight`), a quantity such as `2` or `500m`: where " +
			"Kueue's configuration enables fair sharing, borrowed quota is shared between the " + what + " and its siblings in proportion " +
			"to their weights: the job whose queue would borrow least per weight is admitted first, and a borrowing queue may preempt " +
			"jobs of one that borrows more (the plan's admission prediction follows this where Kueue's configuration enables it). `0` gives it an infinite share (it borrows only what " +
			"no one else wants); a weight above 0 must be more than `1n`. Unset: Kueue's 1. Without fair sharing enabled, Kueue ignores it. " +
			"Changed in place."}
}

// resourceGroupsOf is the resource groups of a ClusterQueue's or Cohort's model.
func resourceGroupsOf(ctx context.Context, groups []resourceGroupModel, diags *diag.Diagnostics) []kueue.ResourceGroup {
	var out []kueue.ResourceGroup
	for _, g := range groups {
		group := kueue.ResourceGroup{}
		diags.Append(g.CoveredResources.ElementsAs(ctx, &group.CoveredResources, true)...)
		for _, f := range g.Flavor {
			fq := kueue.FlavorQuotas{Name: f.Name.ValueString()}
			for _, q := range f.Resource {
				fq.Resources = append(fq.Resources, kueue.Quota{Name: q.Name.ValueString(), Nominal: q.NominalQuota.ValueString(),
					BorrowingLimit: q.BorrowingLimit.ValueString(), LendingLimit: q.LendingLimit.ValueString()})
			}
			group.Flavors = append(group.Flavors, fq)
		}
		out = append(out, group)
	}
	return out
}

// resourceGroupModels is the model of the resource groups read, each quantity in prior's words
// where it is the same amount.
func resourceGroupModels(ctx context.Context, prior []resourceGroupModel, groups []kueue.ResourceGroup, diags *diag.Diagnostics) []resourceGroupModel {
	var out []resourceGroupModel
	for gi, g := range groups {
		group := resourceGroupModel{CoveredResources: optionalList(ctx, g.CoveredResources, diags)}
		for fi, f := range g.Flavors {
			fq := flavorQuotasModel{Name: types.StringValue(f.Name)}
			for qi, q := range f.Resources {
				var was quotaModel
				if gi < len(prior) && fi < len(prior[gi].Flavor) && qi < len(prior[gi].Flavor[fi].Resource) {
					was = prior[gi].Flavor[fi].Resource[qi]
				}
				fq.Resource = append(fq.Resource, quotaModel{Name: types.StringValue(q.Name),
					NominalQuota: sameQuantity(was.NominalQuota, q.Nominal), BorrowingLimit: sameQuantity(was.BorrowingLimit, q.BorrowingLimit),
					LendingLimit: sameQuantity(was.LendingLimit, q.LendingLimit)})
			}
			group.Flavor = append(group.Flavor, fq)
		}
		out = append(out, group)
	}
	return out
}
