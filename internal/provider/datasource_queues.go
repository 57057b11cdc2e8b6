package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// The queue data sources read a ClusterQueue or a LocalQueue with what waits in it, for a team
// that plans against a queue it does not own: training_local_queue needs only the jobs' role
// (its namespace's LocalQueues and Workloads), training_cluster_queue the admission
// prediction's, which lists ClusterQueues, LocalQueues and Workloads and writes nothing.

var (
	_ datasource.DataSourceWithConfigure = (*clusterQueueDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*localQueueDataSource)(nil)
)

func newClusterQueueDataSource() datasource.DataSource { return &clusterQueueDataSource{} }
func newLocalQueueDataSource() datasource.DataSource   { return &localQueueDataSource{} }

type clusterQueueDataSource struct{ client *kube.Client }
type localQueueDataSource struct{ client *kube.Client }

// queueDataModel is what both queue data sources report.
type queueDataModel struct {
	ID                 types.String `tfsdk:"id"`
	Name               types.String `tfsdk:"name"`
	StopPolicy         types.String `tfsdk:"stop_policy"`
	Usage              types.Map    `tfsdk:"usage"`
	PendingWorkloads   types.Int64  `tfsdk:"pending_workloads"`
	ReservingWorkloads types.Int64  `tfsdk:"reserving_workloads"`
	AdmittedWorkloads  types.Int64  `tfsdk:"admitted_workloads"`
	Active             types.Bool   `tfsdk:"active"`
	InactiveReason     types.String `tfsdk:"inactive_reason"`
	Workloads          types.List   `tfsdk:"workloads"`
	Head               types.Object `tfsdk:"head"`
}

type clusterQueueDataModel struct {
	queueDataModel
	Cohort            types.String `tfsdk:"cohort"`
	QueueingStrategy  types.String `tfsdk:"queueing_strategy"`
	AdmissionChecks   types.List   `tfsdk:"admission_checks"`
	NamespaceSelector types.Map    `tfsdk:"namespace_selector"`
	Quotas            types.List   `tfsdk:"quotas"`
	Borrowed          types.Map    `tfsdk:"borrowed"`
}

type localQueueDataModel struct {
	queueDataModel
	Namespace    types.String `tfsdk:"namespace"`
	ClusterQueue types.String `tfsdk:"cluster_queue"`
}

var workloadAttrTypes = map[string]attr.Type{
	"namespace": types.StringType, "name": types.StringType, "job": types.StringType, "local_queue": types.StringType,
	"cluster_queue": types.StringType, "priority": types.Int64Type, "created": types.StringType, "admitted": types.BoolType,
	"reason": types.StringType,
}

var quotaAttrTypes = map[string]attr.Type{
	"flavor": types.StringType, "resource": types.StringType, "nominal_quota": types.StringType,
	"borrowing_limit": types.StringType, "lending_limit": types.StringType,
}

// workloadAttributes describe one workload of a queue.
func workloadAttributes() map[string]schema.Attribute {
	s := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: d}
	}
	return map[string]schema.Attribute{
		"namespace":     s("Namespace of the workload and its job."),
		"name":          s("Name of the Workload object."),
		"job":           s("The job it stands for, as `Kind name` (for example `MPIJob llama-sft`)."),
		"local_queue":   s("The LocalQueue it was submitted to."),
		"cluster_queue": s("The ClusterQueue it was admitted through, or that its LocalQueue names."),
		"priority":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Its priority, as Kueue orders the queue by it."},
		"created":       s("When it was created (RFC 3339): among equal priorities, the older goes first."),
		"admitted":      schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether Kueue admitted it (its job may run)."},
		"reason":        s("Why it is not admitted, as Kueue says (insufficient quota with how much more is needed, a stopped queue, an admission check that has not passed, an eviction); null once admitted."),
	}
}

// queueAttributes are the attributes both queue data sources have.
func queueAttributes(what string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id":          schema.StringAttribute{Computed: true, MarkdownDescription: "The " + what + "'s name (`namespace/name` for a LocalQueue)."},
		"name":        schema.StringAttribute{Required: true, Validators: []validator.String{objectNameRule}, MarkdownDescription: "Name of the " + what + "."},
		"stop_policy": schema.StringAttribute{Computed: true, MarkdownDescription: "`None`, or `Hold` / `HoldAndDrain` while admissions are stopped."},
		"usage": schema.MapAttribute{ElementType: types.StringType, Computed: true,
			MarkdownDescription: "Quota in use (held by admitted workloads), by `FLAVOR/RESOURCE`."},
		"pending_workloads":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Workloads waiting for admission, as the " + what + "'s status counts them."},
		"reserving_workloads": schema.Int64Attribute{Computed: true, MarkdownDescription: "Workloads holding quota."},
		"admitted_workloads":  schema.Int64Attribute{Computed: true, MarkdownDescription: "Workloads admitted."},
		"active":              schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the " + what + " admits workloads (its `Active` condition)."},
		"inactive_reason":     schema.StringAttribute{Computed: true, MarkdownDescription: "Why it does not, as Kueue says (a missing flavor, a stop policy); null while active."},
		"workloads": schema.ListNestedAttribute{Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: workloadAttributes()},
			MarkdownDescription: "Its unfinished workloads, admitted or waiting, in the order Kueue considers them: higher priority first, then " +
				"the older (an evicted workload's place and admission fair sharing's order by LocalQueue usage are not modelled)."},
		"head": schema.SingleNestedAttribute{Computed: true, Attributes: workloadAttributes(),
			MarkdownDescription: "The first workload of `workloads` that waits, with the reason it does: what blocks the queue. Null when none waits."},
	}
}

// setWorkloads records the queue's workloads, its head and its status.
func (m *queueDataModel) setWorkloads(ws []kueue.QueuedWorkload, st kueue.QueueStatus, stopPolicy string, diags *diag.Diagnostics) {
	objType := types.ObjectType{AttrTypes: workloadAttrTypes}
	value := func(w kueue.QueuedWorkload) types.Object {
		reason := types.StringNull()
		if !w.Admitted {
			reason = types.StringValue(w.Reason)
		}
		o, d := types.ObjectValue(workloadAttrTypes, map[string]attr.Value{
			"namespace": types.StringValue(w.Namespace), "name": types.StringValue(w.Name), "job": optionalString(w.Job),
			"local_queue": types.StringValue(w.LocalQueue), "cluster_queue": optionalString(w.ClusterQueue),
			"priority": types.Int64Value(int64(w.Priority)), "created": types.StringValue(w.Created.UTC().Format(time.RFC3339)),
			"admitted": types.BoolValue(w.Admitted), "reason": reason,
		})
		diags.Append(d...)
		return o
	}
	elems := make([]attr.Value, 0, len(ws))
	for _, w := range ws {
		elems = append(elems, value(w))
	}
	list, d := types.ListValue(objType, elems)
	diags.Append(d...)
	m.Workloads = list
	m.Head = types.ObjectNull(workloadAttrTypes)
	if head, ok := kueue.Head(ws); ok {
		m.Head = value(head)
	}
	m.StopPolicy = types.StringValue(stopPolicy)
	m.Usage = types.MapValueMust(types.StringType, stringValues(st.Usage))
	m.PendingWorkloads, m.ReservingWorkloads, m.AdmittedWorkloads = types.Int64Value(st.Pending), types.Int64Value(st.Reserving), types.Int64Value(st.Admitted)
	m.Active, m.InactiveReason = types.BoolValue(st.Active), optionalString(st.Reason)
}

// stringValues is m as attribute values.
func stringValues(m map[string]string) map[string]attr.Value {
	out := make(map[string]attr.Value, len(m))
	for k, v := range m {
		out[k] = types.StringValue(v)
	}
	return out
}

func (d *clusterQueueDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_queue"
}

func (d *clusterQueueDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := queueAttributes("ClusterQueue")
	q := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	attrs["cohort"] = q("Cohort it borrows from and lends to; null for none.")
	attrs["queueing_strategy"] = q("`BestEffortFIFO` or `StrictFIFO`.")
	attrs["admission_checks"] = schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "AdmissionChecks every workload must pass once it has quota."}
	attrs["namespace_selector"] = schema.MapAttribute{ElementType: types.StringType, Computed: true,
		MarkdownDescription: "Labels a namespace must have for its LocalQueues to submit here; empty for every namespace."}
	attrs["borrowed"] = schema.MapAttribute{ElementType: types.StringType, Computed: true,
		MarkdownDescription: "The part of `usage` borrowed from the cohort, by `FLAVOR/RESOURCE`."}
	attrs["quotas"] = schema.ListNestedAttribute{Computed: true, MarkdownDescription: "Its quotas, one per flavor and resource, in the order of its resource groups.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"flavor":          q("ResourceFlavor."),
			"resource":        q("Resource (`nvidia.com/gpu`, `cpu`, `memory`)."),
			"nominal_quota":   q("What the queue owns."),
			"borrowing_limit": q("How much more it may borrow from the cohort; null for no limit."),
			"lending_limit":   q("How much of its unused quota it may lend; null for all."),
		}}}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Kueue ClusterQueue as it is now, made by this configuration or not: its quotas, what is in use and borrowed, " +
			"its workloads in the order Kueue considers them, and what waits at the head of the queue and why. Needs the role " +
			"`terraform-provider-training-admission-prediction` (it lists ClusterQueues, LocalQueues and Workloads, and writes nothing).",
		Attributes: attrs,
	}
}

func (d *clusterQueueDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *clusterQueueDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m clusterQueueDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := m.Name.ValueString()
	queues, err := d.client.List(ctx, kueue.ClusterQueueGVR, "", "")
	if err != nil {
		resp.Diagnostics.AddError("Error reading ClusterQueue "+name, err.Error())
		return
	}
	var obj *unstructured.Unstructured
	for i := range queues {
		if queues[i].GetName() == name {
			obj = &queues[i]
		}
	}
	if obj == nil {
		resp.Diagnostics.AddError("ClusterQueue not found", fmt.Sprintf("There is no ClusterQueue %s.", name))
		return
	}
	localQueues, workloads, ok := d.listQueued(ctx, &resp.Diagnostics)
	if !ok {
		return
	}
	// What the provider's resource cannot say (a selector of expressions) is read all the same.
	spec, _ := kueue.ReadClusterQueue(obj)
	st := kueue.ReadQueueStatus(obj)
	m.ID = types.StringValue(name)
	m.Cohort = optionalString(spec.Cohort)
	m.QueueingStrategy = types.StringValue(spec.QueueingStrategy)
	m.AdmissionChecks = stringListValue(spec.AdmissionChecks)
	m.NamespaceSelector = types.MapValueMust(types.StringType, stringValues(spec.NamespaceSelector))
	m.Borrowed = types.MapValueMust(types.StringType, stringValues(st.Borrowed))
	var quotas []attr.Value
	for _, g := range spec.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				quotas = append(quotas, types.ObjectValueMust(quotaAttrTypes, map[string]attr.Value{"flavor": types.StringValue(f.Name),
					"resource": types.StringValue(r.Name), "nominal_quota": types.StringValue(r.Nominal),
					"borrowing_limit": optionalString(r.BorrowingLimit), "lending_limit": optionalString(r.LendingLimit)}))
			}
		}
	}
	m.Quotas = types.ListValueMust(types.ObjectType{AttrTypes: quotaAttrTypes}, quotas)
	ws := kueue.QueueWorkloads(workloads, localQueues, func(_, _, cq string) bool { return cq == name })
	m.setWorkloads(ws, st, spec.StopPolicy, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// listQueued lists every LocalQueue (by "namespace/name", its ClusterQueue) and Workload.
func (d *clusterQueueDataSource) listQueued(ctx context.Context, diags *diag.Diagnostics) (map[string]string, []unstructured.Unstructured, bool) {
	lqs, err := d.client.List(ctx, kueue.LocalQueueGVR, "", "")
	if err != nil {
		diags.AddError("Error listing LocalQueues", err.Error())
		return nil, nil, false
	}
	localQueues := map[string]string{}
	for i := range lqs {
		lq := kueue.ReadLocalQueue(&lqs[i])
		localQueues[lq.Namespace+"/"+lq.Name] = lq.ClusterQueue
	}
	workloads, err := d.client.List(ctx, kueue.WorkloadGVR, "", "")
	if err != nil {
		diags.AddError("Error listing Workloads", err.Error())
		return nil, nil, false
	}
	return localQueues, workloads, true
}

func (d *localQueueDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_local_queue"
}

func (d *localQueueDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := queueAttributes("LocalQueue")
	attrs["namespace"] = schema.StringAttribute{Optional: true, Computed: true, Validators: []validator.String{namespaceRule},
		MarkdownDescription: "Namespace of the LocalQueue. Default `default`."}
	attrs["cluster_queue"] = schema.StringAttribute{Computed: true, MarkdownDescription: "The ClusterQueue it submits to."}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Kueue LocalQueue as it is now, made by this configuration or not: its ClusterQueue, what its workloads hold, " +
			"its workloads in the order Kueue considers them, and what waits at its head and why. Needs only the job resources' role " +
			"(`terraform-provider-training`) in its namespace.",
		Attributes: attrs,
	}
}

func (d *localQueueDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *localQueueDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m localQueueDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	namespace, name := m.Namespace.ValueString(), m.Name.ValueString()
	if namespace == "" {
		namespace = "default"
	}
	t := kube.Target{GVR: kueue.LocalQueueGVR, Kind: "LocalQueue", Namespace: namespace, Name: name}
	obj, err := d.client.Get(ctx, t)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return
	case obj == nil:
		resp.Diagnostics.AddError("LocalQueue not found", fmt.Sprintf("There is no LocalQueue %s/%s.", namespace, name))
		return
	}
	workloads, err := d.client.List(ctx, kueue.WorkloadGVR, namespace, "")
	if err != nil {
		resp.Diagnostics.AddError("Error listing the Workloads of namespace "+namespace, err.Error())
		return
	}
	lq := kueue.ReadLocalQueue(obj)
	m.ID, m.Namespace, m.ClusterQueue = types.StringValue(namespace+"/"+name), types.StringValue(namespace), types.StringValue(lq.ClusterQueue)
	ws := kueue.QueueWorkloads(workloads, map[string]string{namespace + "/" + name: lq.ClusterQueue},
		func(ns, q, _ string) bool { return ns == namespace && q == name })
	m.setWorkloads(ws, kueue.ReadQueueStatus(obj), lq.StopPolicy, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
