package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
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

func newLocalQueueResource() resource.Resource {
	return &objectResource[localQueueModel, *localQueueModel]{typeName: "local_queue", schema: localQueueSchema, importID: func(id string) (*localQueueModel, error) {
		namespace, name, err := splitID(id)
		return &localQueueModel{Namespace: types.StringValue(namespace), Name: types.StringValue(name)}, err
	}}
}

type localQueueModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Namespace    types.String `tfsdk:"namespace"`
	ClusterQueue types.String `tfsdk:"cluster_queue"`
	StopPolicy   types.String `tfsdk:"stop_policy"`
	queueStatusModel
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func localQueueSchema(ctx context.Context) schema.Schema {
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
			"stop_policy": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: keepString,
				Validators:          []validator.String{stringvalidator.OneOf(kueue.StopPolicies...)},
				MarkdownDescription: "`None`, `Hold` (admit nothing new from this queue) or `HoldAndDrain` (also evict what runs)." + stopPolicyUnset},
		}),
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

func (m *localQueueModel) target() kube.Target {
	return kube.Target{GVR: kueue.LocalQueueGVR, Kind: "LocalQueue", Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString()}
}

func (m *localQueueModel) timeouts() timeouts.Value { return m.Timeouts }

func (m *localQueueModel) deleteHint() string { return kueueDeleteHint }

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
