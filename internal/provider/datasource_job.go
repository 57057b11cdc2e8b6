package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

var _ datasource.DataSourceWithConfigure = (*jobDataSource)(nil)

func newJobDataSource() datasource.DataSource { return &jobDataSource{} }

type jobDataSource struct {
	client *kube.Client
}

type jobDataModel struct {
	Kind      types.String `tfsdk:"kind"`
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
	Priority  types.String `tfsdk:"priority"`
	QueueName types.String `tfsdk:"queue_name"`
	statusModel
}

func (d *jobDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_job"
}

func (d *jobDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	var names, kinds []string
	for _, k := range jobs.Kinds() {
		names = append(names, k.Name)
		kinds = append(kinds, fmt.Sprintf("`%s` (%s, run by %s)", k.Name, k.Object, k.Operator))
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A training job as `arena get` shows it: status, priority, training duration, and each instance with its state, age and node. " +
			"It reads a job of any kind the provider manages, including ones created outside this Terraform configuration.",
		Attributes: map[string]schema.Attribute{
			"kind": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.OneOf(names...)},
				MarkdownDescription: "The kind of job: " + strings.Join(kinds, ", ") + "."},
			"namespace": schema.StringAttribute{Optional: true, Computed: true, Validators: []validator.String{namespaceRule},
				MarkdownDescription: "Namespace of the job. Default `default`."},
			"name":            schema.StringAttribute{Required: true, Validators: []validator.String{objectNameRule}, MarkdownDescription: "Name of the job."},
			"status":          schema.StringAttribute{Computed: true, MarkdownDescription: "One of " + codeList(jobs.Phases) + "; `QUEUED` while Kueue has not admitted it."},
			"queue_name":      schema.StringAttribute{Computed: true, MarkdownDescription: "The Kueue LocalQueue the job was submitted to; null for none."},
			"queue_reason":    schema.StringAttribute{Computed: true, MarkdownDescription: "Why Kueue has not admitted the job while it is `QUEUED`; null otherwise."},
			"worker_cluster":  dataWorkerClusterAttribute(),
			"priority":        schema.StringAttribute{Computed: true, MarkdownDescription: "The job's PriorityClass as Kueue reads it (`arena get`'s PRIORITY); null for none."},
			"start_time":      schema.StringAttribute{Computed: true, MarkdownDescription: "When the job started (RFC 3339); null before it has."},
			"completion_time": schema.StringAttribute{Computed: true, MarkdownDescription: "When the job finished (RFC 3339); null while it has not."},
			"duration":        schema.StringAttribute{Computed: true, MarkdownDescription: "Training duration: from start to completion, or to now."},
			"accelerator_hours": schema.NumberAttribute{Computed: true, MarkdownDescription: "The accelerator-hours the job has held: the GPUs " +
				"(or the only extended resource) its pods' limits ask for, every role's times its pods, times `duration` in hours, to the hundredth."},
			"instances": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The job's pods (for an elastic job, its tasks).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":  schema.StringAttribute{Computed: true, MarkdownDescription: "Pod name."},
					"role":  schema.StringAttribute{Computed: true, MarkdownDescription: "Role in the job."},
					"index": schema.Int64Attribute{Computed: true, MarkdownDescription: "Index within the role."},
					"phase": schema.StringAttribute{Computed: true, MarkdownDescription: "Pod phase, or the task's state."},
					"node":  schema.StringAttribute{Computed: true, MarkdownDescription: "Node it runs on."},
					"age":   schema.StringAttribute{Computed: true, MarkdownDescription: "Time since the pod was created, like `arena get`'s AGE."},
				}},
			},
		},
	}
}

func (d *jobDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *jobDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m jobDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	namespace := m.Namespace.ValueString()
	if namespace == "" {
		namespace = "default"
	}
	name := m.Name.ValueString()
	now := time.Now()

	kind := jobs.KindByName(m.Kind.ValueString())
	t := jobTarget(kind, namespace, name)
	var observed jobs.Observed
	var err error
	if kind.InstancesFromObject {
		observed.Object, err = d.client.Get(ctx, t)
	} else {
		observed, err = d.client.Observe(ctx, t)
	}
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return
	}
	if observed.Object == nil {
		resp.Diagnostics.AddError("Job not found", fmt.Sprintf("There is no %s job %s/%s.", kind.Name, namespace, name))
		return
	}
	status, err := kind.Status(observed, now)
	if err != nil {
		resp.Diagnostics.AddError("Error reading the status of "+t.String(), err.Error())
		return
	}
	m.Namespace = types.StringValue(namespace)
	m.Priority = optionalString(kind.PriorityClass(observed.Object))
	m.QueueName = optionalString(jobs.QueueName(observed.Object))
	status.Accelerators = kind.Accelerators(observed.Object, "")
	resp.Diagnostics.Append(m.setAt(status, now)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// dataWorkerClusterAttribute is the data source's worker_cluster, as the resources'.
func dataWorkerClusterAttribute() schema.StringAttribute {
	r := workerClusterAttribute()
	return schema.StringAttribute{Computed: true, MarkdownDescription: r.MarkdownDescription}
}
