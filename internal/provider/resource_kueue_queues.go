package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

var (
	_ resource.ResourceWithImportState  = (*objectResource[flavorModel, *flavorModel])(nil)
	_ resource.ResourceWithUpgradeState = (*objectResource[flavorModel, *flavorModel])(nil)
)

func newResourceFlavorResource() resource.Resource {
	return &objectResource[flavorModel, *flavorModel]{typeName: "resource_flavor", importID: func(id string) (*flavorModel, error) {
		return &flavorModel{Name: types.StringValue(id)}, clusterScopedID(id)
	}}
}

func newClusterQueueResource() resource.Resource {
	return &objectResource[clusterQueueModel, *clusterQueueModel]{typeName: "cluster_queue", importID: func(id string) (*clusterQueueModel, error) {
		return &clusterQueueModel{Name: types.StringValue(id)}, clusterScopedID(id)
	}}
}

func newLocalQueueResource() resource.Resource {
	return &objectResource[localQueueModel, *localQueueModel]{typeName: "local_queue", importID: func(id string) (*localQueueModel, error) {
		namespace, name, err := splitID(id)
		return &localQueueModel{Namespace: types.StringValue(namespace), Name: types.StringValue(name)}, err
	}}
}

func clusterScopedID(id string) error {
	if id == "" || strings.Contains(id, "/") {
		return fmt.Errorf("import ID %q is not the object's name (it is cluster-scoped: no namespace)", id)
	}
	return nil
}

var (
	replaceName      = []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keepID           = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	keepCount        = []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}
	keepMap          = []planmodifier.Map{mapplanmodifier.UseStateForUnknown()}
	kueueObjectNames = []validator.String{objectNameRule}
)

// kueueDeleteHint says what holds a Kueue object after its deletion.
const kueueDeleteHint = "Kueue keeps a flavor or queue while workloads admitted through it still run (its finalizer " +
	"kueue.x-k8s.io/resource-in-use); it goes once they are done."

// kueueTimeouts is the timeouts block of the Kueue resources, as the job resources have it.
func kueueTimeouts(ctx context.Context) schema.Block {
	return timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
}

func idAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, PlanModifiers: keepID, MarkdownDescription: what}
}

// ---- training_resource_flavor ----

type flavorModel struct {
	ID          types.String   `tfsdk:"id"`
	Name        types.String   `tfsdk:"name"`
	NodeLabels  types.Map      `tfsdk:"node_labels"`
	NodeTaints  types.List     `tfsdk:"node_taints"`
	Tolerations types.List     `tfsdk:"tolerations"`
	Timeouts    timeouts.Value `tfsdk:"timeouts"`
}

func (r *objectResource[M, PM]) flavorSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue [ResourceFlavor](https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/): a kind of node a quota " +
			"stands for. Kueue gives the pods it admits under this flavor its `node_labels` as a node selector and its `tolerations`, " +
			"so a queue can admit work onto tainted GPU nodes without every job repeating the tolerations. Imported by name.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute("The flavor's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the ResourceFlavor (cluster-scoped)."},
			"node_labels": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{labelMapRule},
				MarkdownDescription: "Labels of the nodes of this flavor, e.g. `{ \"nvidia.com/gpu.present\" = \"true\" }`: Kueue adds them to the node selector of the pods it admits here."},
			"node_taints": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators:          []validator.List{listvalidator.ValueStringsAre(taintRule)},
				MarkdownDescription: "Taints of the nodes of this flavor, as `kubectl taint` writes them (`key=value:Effect` or `key:Effect`): a workload is admitted here only if it tolerates them (its own tolerations, or this flavor's)."},
			"tolerations": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators:          []validator.List{listvalidator.ValueStringsAre(tolerationRule)},
				MarkdownDescription: "Tolerations Kueue adds to the pods it admits under this flavor, in Arena's `--toleration` grammar (`gpu_node`, `key=value:Effect`, `all`), as the jobs' `tolerations`."},
		},
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *flavorModel) target() kube.Target {
	return kube.Target{GVR: kueue.ResourceFlavorGVR, Kind: "ResourceFlavor", Name: m.Name.ValueString()}
}
func (m *flavorModel) timeouts() timeouts.Value { return m.Timeouts }
func (m *flavorModel) setID()                   { m.ID = m.Name }
func (m *flavorModel) keepStatus(objectModel)   {}
func (m *flavorModel) deleteHint() string       { return kueueDeleteHint }

func (m *flavorModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.FlavorSpec{Name: m.Name.ValueString()}
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

// ---- training_cluster_queue ----

type clusterQueueModel struct {
	ID                types.String         `tfsdk:"id"`
	Name              types.String         `tfsdk:"name"`
	Cohort            types.String         `tfsdk:"cohort"`
	NamespaceSelector types.Map            `tfsdk:"namespace_selector"`
	QueueingStrategy  types.String         `tfsdk:"queueing_strategy"`
	StopPolicy        types.String         `tfsdk:"stop_policy"`
	ResourceGroup     []resourceGroupModel `tfsdk:"resource_group"`
	Preemption        []preemptionModel    `tfsdk:"preemption"`
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

// queueStatusModel is what ClusterQueues and LocalQueues report of their workloads.
type queueStatusModel struct {
	PendingWorkloads   types.Int64 `tfsdk:"pending_workloads"`
	ReservingWorkloads types.Int64 `tfsdk:"reserving_workloads"`
	AdmittedWorkloads  types.Int64 `tfsdk:"admitted_workloads"`
}

func queueStatusAttributes(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	attrs["pending_workloads"] = schema.Int64Attribute{Computed: true, PlanModifiers: keepCount,
		MarkdownDescription: "Workloads waiting for admission, at the last refresh."}
	attrs["reserving_workloads"] = schema.Int64Attribute{Computed: true, PlanModifiers: keepCount,
		MarkdownDescription: "Workloads holding quota, at the last refresh."}
	attrs["admitted_workloads"] = schema.Int64Attribute{Computed: true, PlanModifiers: keepCount,
		MarkdownDescription: "Workloads admitted (running), at the last refresh."}
	return attrs
}

func (s *queueStatusModel) set(st kueue.QueueStatus) {
	s.PendingWorkloads = types.Int64Value(st.Pending)
	s.ReservingWorkloads = types.Int64Value(st.Reserving)
	s.AdmittedWorkloads = types.Int64Value(st.Admitted)
}

func (r *objectResource[M, PM]) clusterQueueSchema(ctx context.Context) schema.Schema {
	quantity := []validator.String{quotaRule}
	return schema.Schema{
		MarkdownDescription: "A Kueue [ClusterQueue](https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/): quotas of GPUs, CPU and memory " +
			"per flavor, the cohort it borrows from and lends to, and when its workloads preempt others. Jobs reach it through a " +
			"`training_local_queue` and their `queue_name`. Its status (workloads pending and admitted, quota in use) is read on every refresh. " +
			"Changing a quota updates it in place, and Kueue admits what now fits. Imported by name.",
		Attributes: queueStatusAttributes(map[string]schema.Attribute{
			"id":   idAttribute("The ClusterQueue's name."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the ClusterQueue (cluster-scoped)."},
			"cohort": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule, objectNameRule},
				MarkdownDescription: "Cohort the queue belongs to: queues of one cohort borrow each other's unused quota."},
			"namespace_selector": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{labelMapRule},
				MarkdownDescription: "Labels a namespace must have for its LocalQueues to submit here. Unset: every namespace."},
			"queueing_strategy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(kueue.QueueingStrategies[0]),
				Validators:          []validator.String{stringvalidator.OneOf(kueue.QueueingStrategies...)},
				MarkdownDescription: "`BestEffortFIFO` (default: a workload that does not fit lets the next one in) or `StrictFIFO`."},
			"stop_policy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(kueue.StopPolicies[0]),
				Validators:          []validator.String{stringvalidator.OneOf(kueue.StopPolicies...)},
				MarkdownDescription: "`None` (default), `Hold` (admit nothing new) or `HoldAndDrain` (also evict what runs)."},
			"usage": schema.MapAttribute{ElementType: types.StringType, Computed: true, PlanModifiers: keepMap,
				MarkdownDescription: "Quota in use at the last refresh, by `FLAVOR/RESOURCE`, e.g. `{ \"gpu/nvidia.com/gpu\" = \"2\" }`."},
		}),
		Blocks: map[string]schema.Block{
			"timeouts": kueueTimeouts(ctx),
			"resource_group": schema.ListNestedBlock{
				MarkdownDescription: "Resources whose quotas are given together, per flavor, in order of preference.",
				Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
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
											"nominal_quota":   schema.StringAttribute{Required: true, Validators: quantity, MarkdownDescription: "The quota this queue owns, as a Kubernetes quantity (`2`, `64Gi`)."},
											"borrowing_limit": schema.StringAttribute{Optional: true, Validators: quantity, MarkdownDescription: "How much more it may borrow from its cohort. Unset: no limit. Needs a `cohort`."},
											"lending_limit":   schema.StringAttribute{Optional: true, Validators: quantity, MarkdownDescription: "How much of its unused quota it lends to its cohort. Unset: all of it. Needs a `cohort`."},
										}},
									},
								},
							},
						},
					},
				},
			},
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
func (m *clusterQueueModel) deleteHint() string       { return kueueDeleteHint }
func (m *clusterQueueModel) setID()                   { m.ID = m.Name }
func (m *clusterQueueModel) keepStatus(prior objectModel) {
	if p, ok := prior.(*clusterQueueModel); ok {
		m.queueStatusModel, m.Usage = p.queueStatusModel, p.Usage
	}
}

func (m *clusterQueueModel) spec(ctx context.Context) (kueue.ClusterQueueSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := kueue.ClusterQueueSpec{Name: m.Name.ValueString(), Cohort: m.Cohort.ValueString(),
		QueueingStrategy: m.QueueingStrategy.ValueString(), StopPolicy: m.StopPolicy.ValueString()}
	diags.Append(m.NamespaceSelector.ElementsAs(ctx, &s.NamespaceSelector, true)...)
	for _, g := range m.ResourceGroup {
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
		s.ResourceGroups = append(s.ResourceGroups, group)
	}
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
	m.NamespaceSelector = optionalMap(ctx, s.NamespaceSelector, &diags)
	m.QueueingStrategy = types.StringValue(s.QueueingStrategy)
	m.StopPolicy = types.StringValue(s.StopPolicy)
	prior := m.ResourceGroup
	m.ResourceGroup = nil
	for gi, g := range s.ResourceGroups {
		group := resourceGroupModel{CoveredResources: optionalList(ctx, g.CoveredResources, &diags)}
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
		m.ResourceGroup = append(m.ResourceGroup, group)
	}
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

// ---- training_local_queue ----

type localQueueModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Namespace    types.String `tfsdk:"namespace"`
	ClusterQueue types.String `tfsdk:"cluster_queue"`
	StopPolicy   types.String `tfsdk:"stop_policy"`
	queueStatusModel
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func (r *objectResource[M, PM]) localQueueSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Kueue [LocalQueue](https://kueue.sigs.k8s.io/docs/concepts/local_queue/): a namespace's door to a " +
			"ClusterQueue. A job submits to it with `queue_name`. Imported as `NAMESPACE/NAME`.",
		Attributes: queueStatusAttributes(map[string]schema.Attribute{
			"id":   idAttribute("`NAMESPACE/NAME`."),
			"name": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames, MarkdownDescription: "Name of the LocalQueue: the jobs' `queue_name`."},
			"namespace": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("default"), PlanModifiers: replaceName,
				Validators: []validator.String{namespaceRule}, MarkdownDescription: "Namespace of the LocalQueue and of the jobs that use it."},
			"cluster_queue": schema.StringAttribute{Required: true, PlanModifiers: replaceName, Validators: kueueObjectNames,
				MarkdownDescription: "The ClusterQueue it submits to. Kueue does not let it change, so a change replaces the LocalQueue."},
			"stop_policy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(kueue.StopPolicies[0]),
				Validators:          []validator.String{stringvalidator.OneOf(kueue.StopPolicies...)},
				MarkdownDescription: "`None` (default), `Hold` (admit nothing new from this queue) or `HoldAndDrain` (also evict what runs)."},
		}),
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *localQueueModel) target() kube.Target {
	return kube.Target{GVR: kueue.LocalQueueGVR, Kind: "LocalQueue", Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString()}
}
func (m *localQueueModel) timeouts() timeouts.Value { return m.Timeouts }
func (m *localQueueModel) deleteHint() string       { return kueueDeleteHint }
func (m *localQueueModel) setID() {
	m.ID = types.StringValue(m.Namespace.ValueString() + "/" + m.Name.ValueString())
}
func (m *localQueueModel) keepStatus(prior objectModel) {
	if p, ok := prior.(*localQueueModel); ok {
		m.queueStatusModel = p.queueStatusModel
	}
}

func (m *localQueueModel) build(context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj, err := kueue.LocalQueueSpec{Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString(),
		ClusterQueue: m.ClusterQueue.ValueString(), StopPolicy: m.StopPolicy.ValueString()}.Build()
	if err != nil {
		diags.AddError("Invalid LocalQueue", err.Error())
	}
	return obj, diags
}

//nolint:unparam // the objectModel method: a LocalQueue has nothing that can fail to read
func (m *localQueueModel) read(_ context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s := kueue.ReadLocalQueue(obj)
	m.ClusterQueue = types.StringValue(s.ClusterQueue)
	m.StopPolicy = types.StringValue(s.StopPolicy)
	m.set(kueue.ReadQueueStatus(obj))
	return nil
}

// Schema serves the schema of whichever Kueue object the resource manages.
func (r *objectResource[M, PM]) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	switch any(new(M)).(type) {
	case *flavorModel:
		resp.Schema = r.flavorSchema(ctx)
	case *clusterQueueModel:
		resp.Schema = r.clusterQueueSchema(ctx)
	case *localQueueModel:
		resp.Schema = r.localQueueSchema(ctx)
	case *runtimeModel:
		resp.Schema = r.runtimeSchema(ctx)
	}
}
