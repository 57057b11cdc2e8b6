package provider

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// checkpointModel is the checkpoint attribute: where the training saves and how long a save takes.
type checkpointModel struct {
	Path        types.String `tfsdk:"path"`
	SaveSeconds types.Int64  `tfsdk:"save_seconds"`
}

var checkpointAttrTypes = map[string]attr.Type{"path": types.StringType, "save_seconds": types.Int64Type}

// stopping is how a resource's pods stop, which the checkpoint's rules depend on.
type stopping struct {
	// openMPI: the pods run mpirun (an MPIJob), whose daemons wait a save twice
	// (jobs.CheckpointGrace); openMPIFramework: they do when the plan's framework is "mpi" (a
	// runtime's).
	openMPI, openMPIFramework bool
	// torchrun: the pods' program runs under torchrun whatever their command says (an elastic
	// job's).
	torchrun bool
	// volumesElsewhere: the pods also mount volumes the resource does not say (a TrainJob's
	// runtime's), so a checkpoint on none of its data_volumes may still be on a volume.
	volumesElsewhere bool
	// runtimeDecides: how the pods stop is their runtime's (a TrainJob's), which the grace's
	// attribute cannot read: the resource plans it (planGraceOnRuntime), or the create does.
	runtimeDecides bool
}

// stoppingOf is how the pods of a job of kind k stop (jobs.Kind.Stops).
func stoppingOf(k *jobs.Kind) stopping {
	stop := k.Stops()
	return stopping{openMPI: stop == jobs.StopOpenMPI, torchrun: stop == jobs.StopTorchrun,
		// A TrainJob's pods are its runtime's, which may mount volumes the job does not say.
		volumesElsewhere: stop == jobs.StopRuntime, runtimeDecides: stop == jobs.StopRuntime}
}

// usesOpenMPI says whether the planned pods stop through Open MPI's daemons.
func (s stopping) usesOpenMPI(ctx context.Context, plan tfsdk.Plan) bool {
	if !s.openMPIFramework {
		return s.openMPI
	}
	var framework types.String
	_ = plan.GetAttribute(ctx, path.Root("framework"), &framework)
	return framework.ValueString() == jobs.FrameworkMPI
}

func checkpointAttribute(role string, s stopping) schema.SingleNestedAttribute {
	grace := "`save_seconds` and 10 seconds"
	if s.openMPI {
		grace = "twice `save_seconds` and 10 seconds (the launcher's and workers' `preStop` hooks send the ranks SIGTERM first and hold " +
			"the pods until they end; under Open MPI 4 a launcher stopped first has its daemons wait the save once before they signal the ranks; " +
			"tested with Open MPI 4.1 and 5.0, while MPICH and Intel MPI cut a save at the stop short: see the guide)"
	} else if s.openMPIFramework {
		grace = "`save_seconds` and 10 seconds (with framework `mpi`, twice the save and 10 seconds)"
	}
	return schema.SingleNestedAttribute{Optional: true,
		Validators: []validator.Object{checkpointOnAVolume{s}},
		Attributes: map[string]schema.Attribute{
			"path": schema.StringAttribute{Required: true, Validators: []validator.String{checkpointPathRule},
				MarkdownDescription: "Where the program saves: a folder or file in its containers, on a volume that outlives the pods " +
					"and that the user the program runs as may write to, or a URI of object storage (`s3://BUCKET/PATH`, `gs://`, `az://`, " +
					"any `SCHEME://HOST/PATH`). The volume may be one of `data_volumes`, one a `pod_patch` mounts, or one of a TrainJob's " +
					"runtime. On a PersistentVolumeClaim or a network volume (NFS, iSCSI, a cloud disk) the plan can see that the checkpoint " +
					"outlives the pods; on object storage, a `hostPath` or a CSI driver's inline volume it cannot, and the plan that creates " +
					"the job says once, as a warning, that it trusts the program and the storage to keep it. A path on the containers' own " +
					"filesystem, an `emptyDir`, a generic ephemeral volume or a read-only mount is refused: it is lost with the pods. Every " +
					"container of the roles that train gets it as `" + jobs.CheckpointPathEnv + "`."},
			"save_seconds": schema.Int64Attribute{Required: true, Validators: []validator.Int64{int64validator.Between(1, 86400)},
				MarkdownDescription: "The most a save takes, from SIGTERM to the program's exit. Every container of the roles that train " +
					"gets it as `" + jobs.CheckpointSaveSecondsEnv + "`."},
		},
		MarkdownDescription: "Where the training of " + role + " saves and how long a save takes. The program saves by itself; every " +
			"stop of the pods (a replacement, a destroy, a Kueue preemption) gives it that time: `termination_grace_period_seconds` " +
			"defaults to " + grace + ", and a shorter one is refused. The plan of a replacement of a running job says whether the " +
			"new job finds the checkpoint; without one, it warns that the training starts again from the beginning. See " +
			"[Checkpoints and replacements](../guides/checkpoints.md). Changing it replaces the job."}
}

// torchrunShutdown is how long torchrun gives its workers after it sends them SIGTERM before it
// kills them: fixed in PyTorch's elastic agent for years, an option (--shutdown-timeout) in
// recent releases only.
const torchrunShutdown = 30

// checkpointPathRule refuses a path that is not absolute and clean.
var checkpointPathRule = stringRule{"checkpoint path", jobs.ParseCheckpointPath}

// checkpointOf converts the attribute into the plain spec; nil when unset or unknown.
func checkpointOf(ctx context.Context, v types.Object, diags *diag.Diagnostics) *jobs.Checkpoint {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var m checkpointModel
	diags.Append(v.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	return &jobs.Checkpoint{Path: m.Path.ValueString(), SaveSeconds: m.SaveSeconds.ValueInt64()}
}

// checkpointValue is the attribute of what the cluster holds.
func checkpointValue(c *jobs.Checkpoint) types.Object {
	if c == nil {
		return types.ObjectNull(checkpointAttrTypes)
	}
	return types.ObjectValueMust(checkpointAttrTypes, map[string]attr.Value{
		"path": types.StringValue(c.Path), "save_seconds": types.Int64Value(c.SaveSeconds)})
}

// checkpointOnAVolume refuses, from the configuration alone, a checkpoint that is certainly lost
// with the pods: a path on none of data_volumes, where nothing else can mount a volume (no
// pod_patch, no runtime). Where something else can, the plan judges the volume the pods mount
// (checkpointKept). It refuses env variables that the checkpoint sets, and warns when the command
// runs the program under a shell that would not pass SIGTERM on (jobs.CheckpointSignalProblem).
type checkpointOnAVolume struct{ s stopping }

func (v checkpointOnAVolume) Description(context.Context) string {
	return "the checkpoint's path is on a volume the pods mount, or a URI"
}
func (v checkpointOnAVolume) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v checkpointOnAVolume) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var c checkpointModel
	var volumes types.List
	if req.ConfigValue.As(ctx, &c, basetypes.ObjectAsOptions{}).HasError() || req.Config.GetAttribute(ctx, path.Root("data_volumes"), &volumes).HasError() {
		return
	}
	var env types.Map
	if !req.Config.GetAttribute(ctx, path.Root("env"), &env).HasError() && !env.IsUnknown() {
		for _, name := range []string{jobs.CheckpointPathEnv, jobs.CheckpointSaveSecondsEnv} {
			if _, set := env.Elements()[name]; set {
				resp.Diagnostics.AddAttributeError(path.Root("env").AtMapKey(name), "Variable set by checkpoint",
					fmt.Sprintf("%s is what checkpoint sets in the pods: remove it from env, and read it in the program.", name))
			}
		}
	}
	var command types.List
	var args []string
	if !req.Config.GetAttribute(ctx, path.Root("command"), &command).HasError() && !command.IsUnknown() {
		_ = command.ElementsAs(ctx, &args, true)
		if problem := jobs.CheckpointSignalProblem(args); problem != "" {
			resp.Diagnostics.AddAttributeWarning(path.Root("command"), "The program may not be sent its stop signal", problem+".")
		}
	}
	torchrun := v.s.torchrun || len(args) > 0 && filepath.Base(args[0]) == "torchrun"
	if save := c.SaveSeconds; torchrun && !save.IsUnknown() && save.ValueInt64() > torchrunShutdown {
		resp.Diagnostics.AddAttributeWarning(req.Path.AtName("save_seconds"), "torchrun may cut the save short",
			fmt.Sprintf("torchrun sends its workers SIGTERM and kills them %d seconds later, whatever the pods' grace; a save of up to %d "+
				"seconds may not end. Make the save shorter, or give torchrun a longer --shutdown-timeout where its PyTorch release has the option.",
				torchrunShutdown, save.ValueInt64()))
	}
	p := c.Path.ValueString()
	if c.Path.IsUnknown() || volumes.IsUnknown() || jobs.ParseCheckpointPath(p) != nil || jobs.CheckpointURI(p) {
		return // a path that is not one is refused by its own rule; a URI is the plan's to warn of
	}
	mounts := dataVolumesOf(ctx, volumes)
	if _, ok := jobs.CheckpointVolume(p, mounts); ok {
		return
	}
	var patches types.Map
	patched := !req.Config.GetAttribute(ctx, path.Root("pod_patch"), &patches).HasError() && !patches.IsNull()
	if v.s.volumesElsewhere || patched {
		return // the plan reads the volumes the pods mount (checkpointKept)
	}
	declared := make([]string, len(mounts))
	for i, d := range mounts {
		declared[i] = d.String()
	}
	resp.Diagnostics.AddAttributeError(req.Path.AtName("path"), "Checkpoint on no volume",
		fmt.Sprintf("checkpoint.path %s is on none of data_volumes %q, and no pod_patch mounts a volume: it is on the containers' own "+
			"filesystem, lost with the pods, and no job made in their place can resume from it. Save under the mount path of a "+
			"PersistentVolumeClaim (data_volumes = [\"CLAIM:%s\"]), of a network volume a pod_patch mounts, or to object storage "+
			"(path = \"s3://BUCKET/PATH\").", p, declared, p))
}

// checkpointKept judges, in the plan that makes a job's pods, where the checkpoint of the job m
// is saved, from the pods' roles as its operator makes them: it refuses a checkpoint that is lost
// with the pods, and warns when the job is created that the provider cannot see whether it
// outlives them (object storage, a hostPath, a CSI driver's volume, a runtime it could not read).
// A replacement's warning (warnReplacedTraining) says the same of a running job.
func checkpointKept(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, m jobModel, roles []jobs.RolePods, rolesKnown bool) {
	var diags diag.Diagnostics
	c := checkpointOf(ctx, m.pod().Checkpoint, &diags)
	if c == nil || m.pod().DataVolumes.IsUnknown() {
		return
	}
	store := jobs.DataVolumesStore(c.Path, dataVolumesOf(ctx, m.pod().DataVolumes))
	if rolesKnown {
		store = jobs.CheckpointStoreOf(c.Path, roles)
	}
	switch {
	case store.Keeping == jobs.Lost:
		resp.Diagnostics.AddAttributeError(path.Root("checkpoint").AtName("path"), "Checkpoint lost with the pods",
			fmt.Sprintf("checkpoint.path %s is on %s: what the program saves there is lost with its pods, and no job made in their "+
				"place can resume from it. Save on a PersistentVolumeClaim or a network volume the pods mount, or to object storage "+
				"(path = \"s3://BUCKET/PATH\").", c.Path, store))
	case store.Keeping == jobs.Trusted && req.State.Raw.IsNull():
		resp.Diagnostics.AddAttributeWarning(path.Root("checkpoint").AtName("path"), "The provider trusts the program to keep the checkpoint",
			trusted(c.Path, store))
	}
}

// trusted says that the provider cannot see whether the checkpoint at p on store outlives the
// pods.
func trusted(p string, store jobs.CheckpointStore) string {
	return fmt.Sprintf("%s is on %s: the provider cannot see whether what is saved there outlives the pods, and trusts the program and "+
		"the storage to keep it, and a job made in their place to find it there.", p, store)
}

// checkpointGrace plans termination_grace_period_seconds: unset, it is what a checkpoint's save
// needs (jobs.CheckpointGrace), so that the plan shows the grace the pods get; set shorter than
// that, it is refused.
type checkpointGrace struct{ s stopping }

func (checkpointGrace) Description(context.Context) string {
	return "defaults to what the checkpoint's save needs"
}
func (m checkpointGrace) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

// keptInPlace: a runtime, whose attributes change in place, keeps this modifier (inPlace).
func (checkpointGrace) keptInPlace() {}

func (m checkpointGrace) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var c types.Object
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("checkpoint"), &c)...)
	if resp.Diagnostics.HasError() || req.ConfigValue.IsUnknown() {
		return
	}
	if c.IsUnknown() {
		if req.ConfigValue.IsNull() {
			resp.PlanValue = types.Int64Unknown()
		}
		return
	}
	checkpoint := checkpointOf(ctx, c, &resp.Diagnostics)
	if checkpoint == nil {
		resp.PlanValue = req.ConfigValue
		return
	}
	if !req.State.Raw.IsNull() {
		// A job whose grace and checkpoint do not change is left as it runs, and the plan of an
		// unchanged job says nothing.
		var was types.Object
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("checkpoint"), &was)...)
		if was.Equal(c) && (req.ConfigValue.IsNull() || req.ConfigValue.Equal(req.StateValue)) {
			resp.PlanValue = req.StateValue
			return
		}
	}
	need := jobs.CheckpointGrace(checkpoint.SaveSeconds, m.s.usesOpenMPI(ctx, req.Plan))
	switch {
	case req.ConfigValue.IsNull() && m.s.runtimeDecides:
		resp.PlanValue = types.Int64Unknown()
		return
	case req.ConfigValue.IsNull():
		resp.PlanValue = types.Int64Value(need)
		return
	}
	if got := req.ConfigValue.ValueInt64(); got < need {
		resp.Diagnostics.AddAttributeError(req.Path, "Grace too short for the checkpoint",
			fmt.Sprintf("termination_grace_period_seconds (%d) is shorter than the %d seconds a stop with checkpoint.save_seconds = %d takes: "+
				"the pods would be killed before the save ends. Raise it to at least %d, or leave it unset (it then defaults to that).",
				got, need, checkpoint.SaveSeconds, need))
	}
}

// dataVolumesOf parses a data_volumes value, leaving out what does not parse (refused at plan).
func dataVolumesOf(ctx context.Context, v types.List) []jobs.DataVolume {
	var declared []string
	_ = v.ElementsAs(ctx, &declared, true)
	var out []jobs.DataVolume
	for _, s := range declared {
		if d, err := jobs.ParseDataVolume(s); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// warnRuntimeStops warns, in the plan of a TrainJob with a checkpoint whose MPI runtime declares
// none, that its ranks will not get the time to save: the Open MPI stop (the launcher's sigkill
// timeout, the nodes holding their sshd) is the runtime's pods', which the TrainJob only patches.
// A runtime the cluster does not hold yet is not read.
func (r *trainJobResource) warnRuntimeStops(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, plan *trainJobModel) {
	if r.client == nil || req.Plan.Raw.IsNull() || plan.Checkpoint.IsNull() || plan.Checkpoint.IsUnknown() {
		return
	}
	if !req.State.Raw.IsNull() {
		var was types.Object
		if req.State.GetAttribute(ctx, path.Root("checkpoint"), &was).HasError() || was.Equal(plan.Checkpoint) {
			return
		}
	}
	obj, err := plan.runtime(ctx, r.client)
	if err != nil || obj == nil {
		return
	}
	runtime, err := jobs.ReadRuntime(obj)
	if err != nil || runtime.Framework != jobs.FrameworkMPI || runtime.Pod.Checkpoint != nil {
		return
	}
	resp.Diagnostics.AddAttributeWarning(path.Root("checkpoint"), "The runtime does not stop its ranks for a save",
		fmt.Sprintf("%s %s runs mpirun and declares no checkpoint: its launcher does not give the ranks the time to save (Open MPI's "+
			"daemons kill them 1 s after their SIGTERM) and its nodes do not wait for them. Declare the same checkpoint on the runtime.",
			obj.GetKind(), obj.GetName()))
}
