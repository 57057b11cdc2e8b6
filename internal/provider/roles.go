package provider

import (
	"context"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// roleModel is one entry of roles.
type roleModel struct {
	Image        types.String `tfsdk:"image"`
	CPU          types.String `tfsdk:"cpu"`
	Memory       types.String `tfsdk:"memory"`
	Env          types.Map    `tfsdk:"env"`
	NodeSelector types.Map    `tfsdk:"node_selector"`
	Tolerations  types.List   `tfsdk:"tolerations"`
	Priority     types.String `tfsdk:"priority_class_name"`
}

var roleType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"image": types.StringType, "cpu": types.StringType, "memory": types.StringType, "env": types.MapType{ElemType: types.StringType},
	"node_selector": types.MapType{ElemType: types.StringType}, "tolerations": types.ListType{ElemType: types.StringType},
	"priority_class_name": types.StringType,
}}

func rolesNested() schema.NestedAttributeObject {
	return schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"image": schema.StringAttribute{Optional: true, Validators: []validator.String{nonBlankRule},
			MarkdownDescription: "Image of the role's main container, in place of the job's `image`."},
		"cpu": schema.StringAttribute{Optional: true, Validators: []validator.String{quantityRule},
			MarkdownDescription: "CPU of the role's main container as request and limit, in place of the job's."},
		"memory": schema.StringAttribute{Optional: true, Validators: []validator.String{quantityRule},
			MarkdownDescription: "Memory of the role's main container as request and limit, in place of the job's."},
		"env": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{mapvalidator.KeysAre(envNameRule)},
			MarkdownDescription: "Variables of the role's main container, added to the job's `env` (a name of both takes this value)."},
		"node_selector": schema.MapAttribute{ElementType: types.StringType, Optional: true,
			Validators:          []validator.Map{mapvalidator.KeysAre(labelKeyRule), mapvalidator.ValueStringsAre(labelValueRule)},
			MarkdownDescription: "Node labels the role's pods must run on, in place of the job's `node_selector` (`{}`: none)."},
		"tolerations": schema.ListAttribute{ElementType: types.StringType, Optional: true,
			Validators:          []validator.List{listvalidator.ValueStringsAre(tolerationRule)},
			MarkdownDescription: "Taints the role's pods tolerate, in the grammar of the job's `tolerations`, in place of the job's (`[]`: none)."},
		"priority_class_name": schema.StringAttribute{Optional: true, Validators: []validator.String{objectNameRule},
			MarkdownDescription: "PriorityClass of the role's pods, in place of the job's `priority_class_name`."},
	}}
}

// topologyAttribute is required_topology (required) or preferred_topology.
func topologyAttribute(required bool) schema.Attribute {
	what := "in one domain of that level: Kueue admits the job only where one domain (one block, one rack) has room for all of the role's pods " +
		"(annotation `" + jobs.RequiredTopologyAnnotation + "`)"
	if !required {
		what = "in as few domains of that level as Kueue can: it admits the job anyway, spread over more domains when one has no room " +
			"(annotation `" + jobs.PreferredTopologyAnnotation + "`)"
	}
	return schema.MapAttribute{ElementType: types.StringType, Optional: true,
		Validators: []validator.Map{mapvalidator.ValueStringsAre(labelKeyRule)},
		MarkdownDescription: "Topology Aware Scheduling, by role: the topology level (the node label of a level of the `training_topology` " +
			"of the flavor the job is admitted on, e.g. `{ worker = \"cloud.example.com/block\" }`) whose domains keep the role's pods " + what +
			". Needs `queue_name` (Kueue places the pods) and a ClusterQueue whose flavor has a `topology_name`. A role takes " +
			"`required_topology` or `preferred_topology`, not both. A TrainJob takes its runtime's (`training_runtime`'s). Changing it replaces the job."}
}

// runtimeTopologyAttribute is a runtime's required_topology (required) or preferred_topology:
// by replicated job, in place.
func runtimeTopologyAttribute(required bool) schema.Attribute {
	annotation, what := jobs.RequiredTopologyAnnotation, "in one domain of that level: Kueue admits the job only where one domain has room for them all"
	if !required {
		annotation, what = jobs.PreferredTopologyAnnotation, "in as few domains of that level as Kueue can"
	}
	return schema.MapAttribute{ElementType: types.StringType, Optional: true,
		Validators: []validator.Map{mapvalidator.ValueStringsAre(labelKeyRule)},
		MarkdownDescription: "Topology Aware Scheduling of the TrainJobs made from the runtime, by replicated job (`node`; with an MPI runtime " +
			"`launcher` too): the topology level (a node label of a level of the `training_topology` of the flavor a job is admitted on) whose " +
			"domains keep that job's pods " + what + " (annotation `" + annotation + "` on the replicated job's pod template, which Trainer " +
			"copies into each TrainJob's JobSet and Kueue reads there). It takes effect for a TrainJob with a `queue_name` whose ClusterQueue " +
			"has a flavor with a `topology_name`, and the plan of such a TrainJob predicts it. A replicated job takes `required_topology` or " +
			"`preferred_topology`, not both. Changing it updates the runtime in place: jobs already made keep theirs."}
}

// rolesAttribute is roles.
func rolesAttribute() schema.Attribute {
	return schema.MapNestedAttribute{Optional: true, NestedObject: rolesNested(),
		MarkdownDescription: "What a role's pods say otherwise than the job's, by role (the names `pod_patch` takes): the job-wide " +
			"attributes are every role's defaults, and an entry here overrides them for one role: a launcher on CPU nodes with an " +
			"image of its own (`{ launcher = { image = \"...\", cpu = \"2\", node_selector = { pool = \"cpu\" }, tolerations = [] } }`), " +
			"a variable for the workers alone; a parameter server's `cpu` and `memory`. An elastic " +
			"job's `etcd` is a CPU helper, not a worker: it takes none of the job-wide attributes but its priority class, and its " +
			"defaults are the image `" + jobs.DefaultEtcdImage + "`, no resources, and no node selector or tolerations (on a cluster " +
			"whose every node is tainted, give it the tolerations of nodes it may use). Applied before `pod_patch`; read back on " +
			"refresh and import (a role's pods changed by hand show here). Changing it replaces the job."}
}

// roleOptions converts roles.
func roleOptions(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]jobs.RoleOptions {
	var roles map[string]roleModel
	if diags.Append(m.ElementsAs(ctx, &roles, true)...); diags.HasError() || len(roles) == 0 {
		return nil
	}
	out := map[string]jobs.RoleOptions{}
	for name, r := range roles {
		o := jobs.RoleOptions{Image: r.Image.ValueString(), CPU: r.CPU.ValueString(), Memory: r.Memory.ValueString(),
			PriorityClassName: r.Priority.ValueString()}
		diags.Append(r.Env.ElementsAs(ctx, &o.Env, true)...)
		if !r.NodeSelector.IsNull() {
			o.NodeSelector = map[string]string{}
			diags.Append(r.NodeSelector.ElementsAs(ctx, &o.NodeSelector, true)...)
		}
		if !r.Tolerations.IsNull() {
			o.Tolerations = tolerationsOf(ctx, r.Tolerations, path.Root("roles").AtMapKey(name).AtName("tolerations"), diags)
			if o.Tolerations == nil {
				o.Tolerations = []corev1.Toleration{} // none, in place of the job's
			}
		}
		out[name] = o
	}
	return out
}

// rolesValue is roles for what the cluster holds: a role whose tolerations the string grammar
// cannot say (seconds) leaves them to pod_patch.
func rolesValue(ctx context.Context, roles map[string]jobs.RoleOptions, diags *diag.Diagnostics) types.Map {
	if len(roles) == 0 {
		return types.MapNull(roleType)
	}
	values := map[string]attr.Value{}
	for _, name := range slices.Sorted(maps.Keys(roles)) {
		r := roles[name]
		m := roleModel{Image: optionalString(r.Image), CPU: optionalString(r.CPU), Memory: optionalString(r.Memory),
			Env: optionalMap(ctx, r.Env, diags), NodeSelector: types.MapNull(types.StringType), Tolerations: types.ListNull(types.StringType),
			Priority: optionalString(r.PriorityClassName)}
		if r.NodeSelector != nil {
			selector, d := types.MapValueFrom(ctx, types.StringType, r.NodeSelector)
			diags.Append(d...)
			m.NodeSelector = selector
		}
		if r.Tolerations != nil {
			strings, rest := jobs.FormatTolerations(r.Tolerations)
			if len(rest) == 0 {
				// [] (none, in place of the job's) is a list, not null.
				l, d := types.ListValueFrom(ctx, types.StringType, append([]string{}, strings...))
				diags.Append(d...)
				m.Tolerations = l
			}
		}
		v, d := types.ObjectValueFrom(ctx, roleType.AttrTypes, m)
		diags.Append(d...)
		values[name] = v
	}
	out, d := types.MapValue(roleType, values)
	diags.Append(d...)
	return out
}

// readRolesAndPatches sets roles and pod_patch from the live job: what each role's pods say
// otherwise than the job-wide attributes read (jobs.Kind.ReadRoleOptions), then what is left
// beyond those (jobs.Kind.ReadPodPatches), in the state's words where they make the same.
func readRolesAndPatches(ctx context.Context, kind *jobs.Kind, m jobModel, live *unstructured.Unstructured, diags *diag.Diagnostics) {
	p := m.pod()
	if t, ok := m.(withTAS); ok {
		required, preferred := kind.ReadTopology(live)
		t.tas().RequiredTopology, t.tas().PreferredTopology = optionalMap(ctx, required, diags), optionalMap(ctx, preferred, diags)
	}
	t, hasTemplate := m.(withPodTemplate)
	r, hasRoles := m.(withRoles)
	if !hasTemplate || !hasRoles {
		return // a TrainJob: its pods are its runtime's
	}
	var prior map[string]string
	var priorRoles map[string]jobs.RoleOptions
	if !p.imported() {
		diags.Append(t.podTemplate().PodPatch.ElementsAs(ctx, &prior, true)...)
		priorRoles = roleOptions(ctx, r.roles().Roles, diags)
	}
	// The job the other attributes and the state's roles build, without patches.
	t.podTemplate().PodPatch, r.roles().Roles = types.MapNull(types.StringType), rolesValue(ctx, priorRoles, diags)
	spec, d := m.spec(ctx)
	if d.HasError() {
		return // the read says why
	}
	base, _, err := spec.Build()
	if err != nil {
		return
	}
	r.roles().Roles = rolesValue(ctx, jobs.MergeRoleOptions(priorRoles, kind.ReadRoleOptions(live, base, p.imported())), diags)
	if spec, d = m.spec(ctx); d.HasError() {
		return
	}
	if base, _, err = spec.Build(); err != nil {
		return
	}
	t.podTemplate().PodPatch = optionalMap(ctx, kind.ReadPodPatches(live, base, prior), diags)
}
