package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

var _ datasource.DataSourceWithConfigure = (*runtimeDataSource)(nil)

func newRuntimeDataSource() datasource.DataSource { return &runtimeDataSource{} }

// runtimeDataSource reads a Trainer runtime, made by this configuration or not, as what a TrainJob
// on it gets (jobs.OfferOf): for a team that writes training_train_job against a runtime another
// team owns.
type runtimeDataSource struct{ client *kube.Client }

type runtimeDataModel struct {
	ID                     types.String `tfsdk:"id"`
	Name                   types.String `tfsdk:"name"`
	Namespace              types.String `tfsdk:"namespace"`
	NumNodes               types.Int64  `tfsdk:"num_nodes"`
	Kind                   types.String `tfsdk:"kind"`
	Framework              types.String `tfsdk:"framework"`
	DefaultNumNodes        types.Int64  `tfsdk:"default_num_nodes"`
	ProcessesPerNode       types.Int64  `tfsdk:"processes_per_node"`
	GangScheduleTimeout    types.Int64  `tfsdk:"gang_schedule_timeout_seconds"`
	Managed                types.Bool   `tfsdk:"managed"`
	Labels                 types.Map    `tfsdk:"labels"`
	ReplicatedJobs         types.List   `tfsdk:"replicated_jobs"`
	Requests               types.Map    `tfsdk:"requests"`
	TrainerImage           types.String `tfsdk:"trainer_image"`
	TrainerCommand         types.List   `tfsdk:"trainer_command"`
	TrainerEnvNames        types.List   `tfsdk:"trainer_env_names"`
	TerminationGracePeriod types.Int64  `tfsdk:"termination_grace_period_seconds"`
}

var offeredJobAttrTypes = map[string]attr.Type{
	"name": types.StringType, "trainer": types.BoolType, "depends_on": types.ListType{ElemType: types.StringType}, "pods": types.Int64Type,
	"image": types.StringType, "command": types.ListType{ElemType: types.StringType}, "env_names": types.ListType{ElemType: types.StringType},
	"pod_requests": types.MapType{ElemType: types.StringType}, "limits": types.MapType{ElemType: types.StringType},
	"node_selector": types.MapType{ElemType: types.StringType}, "tolerations": types.ListType{ElemType: types.StringType},
	"service_account_name": types.StringType,
}

func (d *runtimeDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_runtime"
}

func (d *runtimeDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	s := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	strings := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: desc}
	}
	stringMap := func(desc string) schema.MapAttribute {
		return schema.MapAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Kubeflow Trainer runtime (a ClusterTrainingRuntime, or with `namespace` a TrainingRuntime), made by this " +
			"configuration or not, as what a TrainJob on it gets: its framework and defaults, and each replicated job Trainer makes of it " +
			"for a job of `num_nodes` nodes, with its pods, their image, command, resources and placement, and what Kueue counts for the " +
			"whole job. A team reads a runtime it does not own before it writes a `training_train_job` on it: the trainer's settings " +
			"(image, command, environment, resources per node) go to the replicated job marked `trainer`. Variables are read by name: " +
			"a runtime made elsewhere may hold a secret inline. Needs `get` on the runtime (the job resources' role has it for " +
			"TrainingRuntimes, `terraform-provider-training-cluster-reads` for ClusterTrainingRuntimes).",
		Attributes: map[string]schema.Attribute{
			"id": s("`namespace/name` of a TrainingRuntime, the name of a ClusterTrainingRuntime."),
			"name": schema.StringAttribute{Required: true, Validators: []validator.String{objectNameRule},
				MarkdownDescription: "Name of the runtime, as a `training_train_job`'s `runtime` names it."},
			"namespace": schema.StringAttribute{Optional: true, Validators: []validator.String{namespaceRule},
				MarkdownDescription: "Namespace of a TrainingRuntime; unset for a ClusterTrainingRuntime."},
			"num_nodes": schema.Int64Attribute{Optional: true, Computed: true, Validators: []validator.Int64{int64validator.AtLeast(1)},
				MarkdownDescription: "The TrainJob's node count to read the runtime for (its `num_nodes`). Default the runtime's " +
					"`default_num_nodes`, or 1."},
			"kind":              s("`ClusterTrainingRuntime` or `TrainingRuntime`."),
			"framework":         s("`torch` (torchrun's environment on every node), `mpi` (a launcher over nodes that run sshd) or `plain`."),
			"default_num_nodes": schema.Int64Attribute{Computed: true, MarkdownDescription: "The runtime's node count, for a job that says none; null when it says none."},
			"processes_per_node": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "An MPI runtime's processes per node (slots in the hostfile); null otherwise or when it says none."},
			"gang_schedule_timeout_seconds": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "How long the job's pods may wait to be scheduled together, when the runtime schedules them as a gang; null otherwise."},
			"managed": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether a `training_runtime` made it."},
			"labels":  stringMap("The runtime's labels."),
			"requests": stringMap("What the whole job's pods request, as Kueue counts them against a queue's quota (each container's " +
				"limit standing for a request it lacks, the largest init container where it is larger), by resource: what the " +
				"queue must have free for a job that sets no resources of its own (a job's `gpus`, `cpu` and `memory` replace the " +
				"trainer's, per node)."),
			"trainer_image":   s("The image of the trainer's container in the replicated job marked `trainer`, which a job's `image` replaces."),
			"trainer_command": strings("Its command and arguments, which a job's `command` replaces."),
			"trainer_env_names": strings("The names of its environment variables (values are never read), which a job's `env` adds to " +
				"or replaces by name."),
			"termination_grace_period_seconds": schema.Int64Attribute{Computed: true, MarkdownDescription: "The trainer's pods' " +
				"termination grace, the time a checkpoint's save has when they stop; null for Kubernetes' 30 seconds."},
			"replicated_jobs": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The replicated jobs Trainer makes, in the runtime's order.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":       s("Its name (`node`, `launcher`, `dataset-initializer`, ...)."),
					"trainer":    schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the job's trainer settings go to it."},
					"depends_on": strings("The replicated jobs it waits for, each as `NAME STATUS` (`node Ready`)."),
					"pods":       schema.Int64Attribute{Computed: true, MarkdownDescription: "How many pods it runs for a job of `num_nodes` nodes."},
					"image":      s("The image of its first container."),
					"command":    strings("Its first container's command and arguments."),
					"env_names":  strings("The names of its first container's environment variables."),
					"pod_requests": stringMap("What one of its pods requests, as the scheduler and Kueue count it, by resource: " +
						"GPUs (`nvidia.com/gpu`), `cpu`, `memory`."),
					"limits":               stringMap("Its first container's limits, by resource."),
					"node_selector":        stringMap("Its pods' node selector."),
					"tolerations":          strings("Its pods' tolerations, as `KEY[=VALUE][:EFFECT]` (a form the job resources take), or as JSON where that form cannot say one."),
					"service_account_name": s("Its pods' service account; null for the namespace's default."),
				}}},
		},
	}
}

func (d *runtimeDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *runtimeDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m runtimeDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t := (&runtimeModel{Name: m.Name, Namespace: m.Namespace}).target()
	obj, err := d.client.Get(ctx, t)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return
	case obj == nil:
		where := "Set namespace to read a TrainingRuntime."
		if t.Namespace != "" {
			where = "Leave namespace unset to read a ClusterTrainingRuntime."
		}
		resp.Diagnostics.AddError("Runtime not found", fmt.Sprintf("There is no %s. %s", t, where))
		return
	}
	offer, err := jobs.OfferOf(obj, int32(m.NumNodes.ValueInt64()))
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return
	}
	m.ID, m.Kind, m.Framework = types.StringValue(importIDOf(t)), types.StringValue(t.Kind), types.StringValue(offer.Framework)
	m.DefaultNumNodes, m.ProcessesPerNode = positiveInt(offer.DefaultNodes), positiveInt(offer.ProcsPerNode)
	if m.NumNodes.IsNull() {
		m.NumNodes = types.Int64Value(int64(max(offer.DefaultNodes, 1)))
	}
	m.GangScheduleTimeout = optionalInt(offer.GangTimeoutSeconds)
	m.Managed = types.BoolValue(offer.Managed)
	m.Labels = types.MapValueMust(types.StringType, stringValues(obj.GetLabels()))
	total := corev1.ResourceList{}
	var list []attr.Value
	m.TrainerImage, m.TrainerCommand, m.TrainerEnvNames, m.TerminationGracePeriod = types.StringNull(), types.ListNull(types.StringType), types.ListNull(types.StringType), types.Int64Null()
	for _, j := range offer.Jobs {
		pod := j.Template.Spec
		requests := kueue.PodRequests(pod)
		for name, q := range requests {
			pods, sum := q.DeepCopy(), total[name]
			pods.Mul(int64(j.Count))
			sum.Add(pods)
			total[name] = sum
		}
		var c corev1.Container
		if len(pod.Containers) > 0 {
			c = pod.Containers[0]
		}
		for _, tc := range pod.Containers {
			if tc.Name == jobs.TrainerNode {
				c = tc
			}
		}
		if j.Trainer {
			m.TrainerImage, m.TrainerCommand, m.TrainerEnvNames = optionalString(c.Image), stringListValue(slices.Concat(c.Command, c.Args)), stringListValue(envNames(c))
			if g := pod.TerminationGracePeriodSeconds; g != nil {
				m.TerminationGracePeriod = types.Int64Value(*g)
			}
		}
		var tolerations []string
		for _, tol := range pod.Tolerations {
			s, ok := jobs.FormatToleration(tol)
			if !ok {
				b, _ := json.Marshal(tol)
				s = string(b)
			}
			tolerations = append(tolerations, s)
		}
		list = append(list, types.ObjectValueMust(offeredJobAttrTypes, map[string]attr.Value{
			"name": types.StringValue(j.Role), "trainer": types.BoolValue(j.Trainer), "depends_on": stringListValue(j.DependsOn),
			"pods": types.Int64Value(int64(j.Count)), "image": optionalString(c.Image), "command": stringListValue(slices.Concat(c.Command, c.Args)),
			"env_names": stringListValue(envNames(c)), "pod_requests": quantityMap(requests), "limits": quantityMap(c.Resources.Limits),
			"node_selector": types.MapValueMust(types.StringType, stringValues(pod.NodeSelector)), "tolerations": stringListValue(tolerations),
			"service_account_name": optionalString(pod.ServiceAccountName),
		}))
	}
	m.ReplicatedJobs = types.ListValueMust(types.ObjectType{AttrTypes: offeredJobAttrTypes}, list)
	m.Requests = quantityMap(total)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// envNames are the names of a container's variables, in its order.
func envNames(c corev1.Container) []string {
	var out []string
	for _, e := range c.Env {
		out = append(out, e.Name)
	}
	return out
}

// quantityMap is a resource list as a map of quantities.
func quantityMap(l corev1.ResourceList) types.Map {
	out := make(map[string]attr.Value, len(l))
	for name, q := range l {
		out[string(name)] = types.StringValue(q.String())
	}
	return types.MapValueMust(types.StringType, out)
}

// positiveInt is n, or null for 0.
func positiveInt(n int32) types.Int64 {
	if n <= 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(n))
}
