package provider

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

var _ resource.ResourceWithValidateConfig = (*objectResource[runtimeModel, *runtimeModel])(nil)

func newRuntimeResource() resource.Resource {
	return &objectResource[runtimeModel, *runtimeModel]{typeName: "runtime", schema: runtimeSchema, importID: func(id string) (*runtimeModel, error) {
		m := &runtimeModel{Name: types.StringValue(id), Namespace: types.StringNull()}
		if namespace, name, ok := strings.Cut(id, "/"); ok {
			m.Namespace, m.Name = types.StringValue(namespace), types.StringValue(name)
			_, _, err := splitID(id)
			return m, err
		}
		return m, clusterScopedID(id)
	}}
}

// runtimeModel is a training_runtime: a ClusterTrainingRuntime, or with a namespace a
// TrainingRuntime.
type runtimeModel struct {
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
	Kind      types.String `tfsdk:"kind"`
	podModel
	podTemplateModel
	tasModel
	writeOnlyEnvModel
	Framework      types.String      `tfsdk:"framework"`
	NumNodes       types.Int64       `tfsdk:"num_nodes"`
	Command        types.List        `tfsdk:"command"`
	MPI            *mpiModel         `tfsdk:"mpi"`
	GangScheduling *runtimeGangModel `tfsdk:"gang_scheduling"`
	Timeouts       timeouts.Value    `tfsdk:"timeouts"`
}

type mpiModel struct {
	ProcessesPerNode  types.Int64  `tfsdk:"processes_per_node"`
	Implementation    types.String `tfsdk:"implementation"`
	SSHAuthMountPath  types.String `tfsdk:"ssh_auth_mount_path"`
	RunLauncherAsNode types.Bool   `tfsdk:"run_launcher_as_node"`
	RunAsUser         types.Int64  `tfsdk:"run_as_user"`
	NodeCommand       types.List   `tfsdk:"node_command"`
}

// runtimeGangModel is a runtime's gang_scheduling: Trainer's coscheduling policy has its timeout
// alone.
type runtimeGangModel struct {
	ScheduleTimeoutSeconds types.Int64 `tfsdk:"schedule_timeout_seconds"`
}

func (m *runtimeModel) spec() jobs.RuntimeSpec {
	return jobs.RuntimeSpec{Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString()}
}

func (m *runtimeModel) target() kube.Target {
	s := m.spec()
	return kube.Target{GVR: s.GVR(), Kind: s.Kind(), Namespace: s.Namespace, Name: s.Name}
}

func (m *runtimeModel) timeouts() timeouts.Value { return m.Timeouts }

func (m *runtimeModel) setID() {
	m.ID = types.StringValue(importIDOf(m.target()))
	m.Kind = types.StringValue(m.spec().Kind())
}

func (m *runtimeModel) keepStatus(objectModel) {}

func (m *runtimeModel) deleteHint() string {
	return "Trainer keeps a runtime while TrainJobs that use it exist (its finalizer trainer.kubeflow.org/resource-in-use); it goes once they are deleted."
}

func (m *runtimeModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	pod, diags := podOptionsOf(ctx, m)
	m.writeOnlyEnvModel.addTo(m.Name.ValueString(), &pod)
	s := m.spec()
	s.Framework, s.Pod = m.Framework.ValueString(), pod
	s.Nodes = int32(m.NumNodes.ValueInt64())
	s.Command = stringList(ctx, m.Command, &diags)
	if p := m.MPI; p != nil {
		s.MPI = &jobs.MPIPolicy{ProcsPerNode: int32(p.ProcessesPerNode.ValueInt64()), Implementation: p.Implementation.ValueString(),
			SSHAuthMountPath: p.SSHAuthMountPath.ValueString(), RunLauncherAsNode: p.RunLauncherAsNode.ValueBool(),
			RunAsUser: p.RunAsUser.ValueInt64(), NodeCommand: stringList(ctx, p.NodeCommand, &diags)}
	} else if s.Framework == jobs.FrameworkMPI {
		s.MPI = ptr.To(jobs.DefaultMPIPolicy())
	}
	if g := m.GangScheduling; g != nil {
		s.GangTimeoutSeconds = ptr.To(int32(g.ScheduleTimeoutSeconds.ValueInt64()))
	}
	if diags.HasError() {
		return nil, diags
	}
	obj, err := jobs.NewRuntime(s)
	if err != nil {
		diags.AddError("Invalid "+s.Kind(), err.Error())
	}
	return obj, diags
}

func (m *runtimeModel) read(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	s, err := jobs.ReadRuntime(obj)
	if err != nil {
		return diag.Diagnostics{diag.NewErrorDiagnostic("Error reading "+obj.GetKind(), err.Error())}
	}
	diags := setPodOf(ctx, m, s.Pod)
	m.RequiredTopology, m.PreferredTopology = optionalMap(ctx, s.Pod.RequiredTopology, &diags), optionalMap(ctx, s.Pod.PreferredTopology, &diags)
	m.Framework = types.StringValue(s.Framework)
	m.NumNodes = types.Int64Null()
	if s.Nodes > 0 {
		m.NumNodes = types.Int64Value(int64(s.Nodes))
	}
	m.Command = optionalList(ctx, s.Command, &diags)
	// A runtime whose MPI policy is all defaults says so without mpi, unless it said it.
	hadMPI := m.MPI != nil
	m.MPI = nil
	if p := s.MPI; p != nil {
		if hadMPI || !reflect.DeepEqual(*p, mpiDefault) {
			m.MPI = &mpiModel{ProcessesPerNode: types.Int64Value(int64(p.ProcsPerNode)), Implementation: types.StringValue(p.Implementation),
				SSHAuthMountPath: types.StringValue(p.SSHAuthMountPath), RunLauncherAsNode: types.BoolValue(p.RunLauncherAsNode),
				RunAsUser: types.Int64Value(p.RunAsUser), NodeCommand: stringListValue(p.NodeCommand)}
		}
	}
	m.GangScheduling = nil
	if s.GangTimeoutSeconds != nil {
		m.GangScheduling = &runtimeGangModel{ScheduleTimeoutSeconds: types.Int64Value(int64(*s.GangTimeoutSeconds))}
	}
	// What its templates hold beyond the other attributes: the patches, in the state's words
	// where they make the same difference.
	var prior map[string]string
	diags.Append(m.PodPatch.ElementsAs(ctx, &prior, true)...)
	m.PodPatch = types.MapNull(types.StringType)
	if bare, d := m.build(ctx); !d.HasError() {
		m.PodPatch = optionalMap(ctx, jobs.ReadRuntimePodPatches(obj, bare, prior), &diags)
	}
	return diags
}

// checkUpdate warns of a change of the runtime in place when the cluster's Trainer is older than
// v2.3.0, which keeps no snapshot of the runtime a TrainJob was made from: its jobs take the change.
func (m *runtimeModel) checkUpdate(ctx context.Context, c *kube.Client, resp *resource.ModifyPlanResponse) {
	if !olderTrainer(ctx, c) {
		return
	}
	resp.Diagnostics.AddWarning("Kubeflow Trainer on the cluster applies runtime "+m.Name.ValueString()+"'s change to its TrainJobs",
		"The cluster's Kubeflow Trainer is older than v2.3.0 (its TrainJob schema has no "+jobs.TrainerMarker().Field()+"), which keeps "+
			"no snapshot of the runtime a TrainJob was made from and reads the runtime again whenever it reconciles the job: a suspended "+
			"or queued TrainJob made from this runtime starts with the change, and a running one's JobSet refuses it, which Trainer "+
			"reports as a failure to make the job's objects while the job keeps running. To leave the jobs made from it as they are, "+
			"make a new runtime for the change, or upgrade Trainer to v2.3.0 or later.")
}

// mpiDefault is the MPI policy of a runtime that says nothing of it.
var mpiDefault = jobs.DefaultMPIPolicy()

func runtimeSchema(ctx context.Context) schema.Schema {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	attributes := inPlace(podAttributes("every node", metadataDoc{on: "the pod templates of every node",
		change: "Changing them updates the runtime in place: jobs already made from it keep theirs."}, stopping{openMPIFramework: true}))
	// A runtime's pod_patch names its replicated jobs, and changes it in place.
	attributes["pod_patch"] = schema.MapAttribute{ElementType: types.StringType, Optional: true,
		PlanModifiers: []planmodifier.Map{samePodPatches{}},
		Validators:    []validator.Map{mapvalidator.ValueStringsAre(podPatchRule)},
		MarkdownDescription: "Strategic merge patches of the runtime's pod templates, by replicated job (`node`; with an MPI " +
			"runtime `launcher` too), in YAML or JSON, applied after every other attribute as the job resources' `pod_patch` is, " +
			"and checked the same way at plan; every TrainJob made from the runtime has them (a TrainJob takes none of its own). " +
			"Refresh reads them back. Changing them updates the runtime in place: jobs already made from it keep theirs."}
	delete(attributes, "roles") // a runtime's replicated jobs' templates are set by its framework's attributes
	attributes = mergeAttributes(attributes, runtimeWriteOnlyEnvAttributes())
	attributes["required_topology"], attributes["preferred_topology"] = runtimeTopologyAttribute(true), runtimeTopologyAttribute(false)
	own := map[string]schema.Attribute{
		"id": idAttribute("`name`, or `namespace/name` of a TrainingRuntime."),
		"name": schema.StringAttribute{Required: true, PlanModifiers: replaceString, Validators: kueueObjectNames,
			MarkdownDescription: "Name of the runtime, which TrainJobs name as their `runtime`."},
		"namespace": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{namespaceRule},
			MarkdownDescription: "Namespace of a **TrainingRuntime**, which serves that namespace's jobs; without one the runtime is a " +
				"**ClusterTrainingRuntime**, which serves every namespace. Changing it replaces the runtime."},
		"kind": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "`ClusterTrainingRuntime` or `TrainingRuntime`: what a `training_train_job`'s `runtime_kind` names it by."},
		"framework": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.OneOf(jobs.Frameworks...)},
			MarkdownDescription: "The ML policy: `torch` (Trainer gives every node torchrun's `PET_NNODES`, `PET_NPROC_PER_NODE`, " +
				"`PET_NODE_RANK`, `PET_MASTER_ADDR`, `PET_MASTER_PORT`), `mpi` (nodes that run an SSH server and a `launcher` that starts " +
				"once they are ready, with a hostfile and SSH keys Trainer makes) or `plain` (the nodes alone). Also the runtime's label `" +
				jobs.FrameworkLabel + "`, which Trainer's SDK lists runtimes by."},
		"num_nodes": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.Between(1, 10000)},
			MarkdownDescription: "Node count of the jobs that do not say theirs (`mlPolicy.numNodes`)."},
		"command": schema.ListAttribute{ElementType: types.StringType, Optional: true,
			MarkdownDescription: "The trainer's default command: every node's (`torch`, `plain`) or the launcher's (`mpi`); a job's `command` replaces it."},
		"image": schema.StringAttribute{Required: true, Validators: []validator.String{nonBlankRule},
			MarkdownDescription: "Container image of every node; a job's `image` replaces it."},
	}
	return schema.Schema{
		Version: podSchemaVersion,
		MarkdownDescription: "A Kubeflow Trainer v2 training runtime, the blueprint a platform team publishes and `training_train_job`s run on: " +
			"a `ClusterTrainingRuntime`, or with `namespace` a `TrainingRuntime` (`trainer.kubeflow.org/v1alpha1`). It holds the ML policy " +
			"(`framework`, the MPI policy), the node template (image, command, resources, env, tolerations, node selector, " +
			"volumes) and the gang-scheduling policy. Every attribute but the name and namespace changes in place: jobs already made keep the " +
			"JobSet they were made with. Destroy waits until Trainer lets the runtime go, once no TrainJob uses it.",
		Attributes: mergeAttributes(attributes, own, map[string]schema.Attribute{
			"mpi": schema.SingleNestedAttribute{Optional: true,
				MarkdownDescription: "The MPI policy (`mlPolicy.mpi`), with `framework = \"mpi\"`; unset, every field's default.",
				Attributes: map[string]schema.Attribute{
					"processes_per_node": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(int64(mpiDefault.ProcsPerNode)),
						Validators:          []validator.Int64{int64validator.Between(1, 1024)},
						MarkdownDescription: "MPI processes (slots in the hostfile) per node (`numProcPerNode`). Default 1, as Trainer's."},
					"implementation": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(mpiDefault.Implementation),
						Validators: []validator.String{stringvalidator.OneOf(jobs.MPIImplementations...)},
						MarkdownDescription: "`OpenMPI`, the default and the only implementation Trainer v2.3.0 makes jobs for: its CRD takes `Intel` and `MPICH` " +
							"too, but every job on such a runtime fails to build."},
					"ssh_auth_mount_path": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(mpiDefault.SSHAuthMountPath),
						MarkdownDescription: "Where the SSH keys Trainer makes are mounted: the `.ssh` folder of the home of `run_as_user`. " +
							fmt.Sprintf("Default `%s`, as in Trainer's own MPI runtime (Trainer's CRD defaults to `/root/.ssh`, root's, which ", mpiDefault.SSHAuthMountPath) +
							"its key modes keep from working: see `run_as_user`)."},
					"run_as_user": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(mpiDefault.RunAsUser),
						Validators: []validator.Int64{int64validator.AtLeast(0)},
						MarkdownDescription: fmt.Sprintf("The user the launcher and the nodes run as (their `runAsUser`, and the pods' `fsGroup`). Default %d, ", mpiDefault.RunAsUser) +
							"`mpiuser` of mpi-operator's base image, as in Trainer's own MPI runtime. Trainer v2.3.0 mounts the private key mode 0640, owned by root " +
							"and readable by the `fsGroup`: OpenSSH refuses a key its own user owns with those modes, so with `0` (root, no `fsGroup`) the " +
							"launcher's `ssh` cannot use it unless its command first copies it to a file of mode 0600; the plan warns."},
					"run_launcher_as_node": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
						MarkdownDescription: "Whether the launcher counts as one of the nodes (it then runs training processes too). Default false."},
					"node_command": schema.ListAttribute{ElementType: types.StringType, Optional: true, Computed: true,
						Default: listDefault(mpiDefault.NodeCommand),
						MarkdownDescription: "What the nodes run: an SSH server in the foreground, as `run_as_user`, which the launcher's `mpirun` reaches them through. " +
							fmt.Sprintf("Default `[%s]`: the SSH server of mpiuser with its own configuration, as mpi-operator's base image has it (port 2222).", quotedList(mpiDefault.NodeCommand))},
				},
			},
			"gang_scheduling": schema.SingleNestedAttribute{Optional: true,
				MarkdownDescription: "Schedule each job's pods all at once or not at all (`podGroupPolicy.coscheduling`): Trainer makes a " +
					"scheduler-plugins PodGroup per job. It needs the coscheduling plugin in the cluster's scheduler and its PodGroup CRD.",
				Attributes: scheduleTimeoutAttribute(true),
			},
		}),
		Blocks: map[string]schema.Block{"timeouts": kueueTimeouts(ctx)},
	}
}

// ValidateConfig checks at plan time that the MPI policy goes with the MPI framework, and warns
// of an MPI runtime run as root.
func (r *objectResource[M, PM]) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if !r.eitherScope() {
		return
	}
	var framework, namespace types.String
	var mpi types.Object
	var version types.Int64
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("namespace"), &namespace)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("sensitive_env_wo_version"), &version)...)
	if namespace.IsNull() && !version.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("sensitive_env_wo"), "Write-only variables on a ClusterTrainingRuntime",
			"A ClusterTrainingRuntime's jobs run in every namespace, and the Secret of its write-only variables would be in one. Give the "+
				"runtime a namespace (a TrainingRuntime), or give each training_train_job its own sensitive_env_wo.")
	}
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("framework"), &framework)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("mpi"), &mpi)...)
	if !framework.IsUnknown() && !framework.IsNull() && framework.ValueString() != jobs.FrameworkMPI && !mpi.IsNull() && !mpi.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("mpi"), "MPI policy without the MPI framework",
			fmt.Sprintf("mpi needs framework = %q, not %q.", jobs.FrameworkMPI, framework.ValueString()))
	}
	if !mpi.IsNull() && !mpi.IsUnknown() {
		{
			if user, ok := mpi.Attributes()["run_as_user"].(types.Int64); ok && !user.IsUnknown() && !user.IsNull() && user.ValueInt64() == 0 {
				resp.Diagnostics.AddAttributeWarning(path.Root("mpi").AtName("run_as_user"), "MPI as root cannot use Trainer's SSH key as mounted",
					"Trainer v2.3.0 mounts the SSH private key mode 0640, owned by root: OpenSSH refuses a key of its own user that others can read "+
						"(\"UNPROTECTED PRIVATE KEY FILE\"), so the launcher's mpirun, run as root, cannot reach the nodes unless its command first copies "+
						"the key to a file of mode 0600. Leave run_as_user unset to run as mpiuser (1000), as Trainer's own MPI runtime does.")
			}
		}
	}
}

// inPlace is attributes without their replace plan modifiers, and without the sentence that
// says a change replaces the job: for objects that change in place (a runtime), unlike the jobs
// the shared attributes were written for.
func inPlace(attributes map[string]schema.Attribute) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(attributes))
	for name, a := range attributes {
		switch a := withoutReplaceNote(a).(type) {
		case schema.StringAttribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		case schema.Int64Attribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		case schema.BoolAttribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		case schema.ListAttribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		case schema.MapAttribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		case schema.MapNestedAttribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		case schema.SingleNestedAttribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		case schema.ListNestedAttribute:
			a.PlanModifiers = keptInPlace(a.PlanModifiers)
			out[name] = a
		default:
			panic(fmt.Sprintf("inPlace: attribute %s of type %T", name, a))
		}
	}
	return out
}

// keptInPlace are the plan modifiers of a job attribute that a runtime keeps: those that plan a
// value rather than a replacement (checkpointGrace).
func keptInPlace[M any](modifiers []M) []M {
	var kept []M
	for _, m := range modifiers {
		if _, ok := any(m).(interface{ keptInPlace() }); ok {
			kept = append(kept, m)
		}
	}
	return kept
}

// replaceNote is the sentence of a job attribute's description that says a change replaces the job.
var replaceNote = strings.NewReplacer(" Changing it replaces the job.", "", " Changing them replaces the job.", "")

// withoutReplaceNote is a with its description's replaceNote removed.
func withoutReplaceNote(a schema.Attribute) schema.Attribute {
	switch a := a.(type) {
	case schema.MapAttribute:
		a.MarkdownDescription = replaceNote.Replace(a.MarkdownDescription)
		return a
	case schema.SingleNestedAttribute:
		a.MarkdownDescription = replaceNote.Replace(a.MarkdownDescription)
		return a
	case schema.ListAttribute:
		a.MarkdownDescription = replaceNote.Replace(a.MarkdownDescription)
		return a
	case schema.StringAttribute:
		a.MarkdownDescription = replaceNote.Replace(a.MarkdownDescription)
		return a
	}
	return a
}

func listDefault(values []string) defaults.List {
	elements := make([]attr.Value, len(values))
	for i, v := range values {
		elements[i] = types.StringValue(v)
	}
	return listdefault.StaticValue(types.ListValueMust(types.StringType, elements))
}

// codeList is a list of values as the docs write them: `A`, `B`, `C`.
func codeList(values []string) string {
	return "`" + strings.Join(values, "`, `") + "`"
}

// quotedList is a list of strings as HCL writes it.
func quotedList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	return strings.Join(quoted, ", ")
}
