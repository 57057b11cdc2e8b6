package provider

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// What a plan or an apply that stops a training says of it: what a replacement or a destroy of a
// running job puts at stake, the guard that refuses it, and how the stop went.

// acceleratorHoursAttribute is a number, not a float64: a float64's values define semantic
// equality, which keeps a job's refreshes from the shortcuts (internal/shortcuts).
func acceleratorHoursAttribute() schema.NumberAttribute {
	return schema.NumberAttribute{Computed: true,
		MarkdownDescription: "The accelerator-hours the job's training has held: the units of `gpu_resource_name` its pods ask for " +
			"(every role's, times its pods) times `duration` in hours, to the hundredth, as of the last refresh or apply; 0 before " +
			"it starts. A plan that replaces or destroys a running job says it too. A policy can refuse a costly replacement with it: " +
			"in `terraform show -json PLANFILE`, the value before the change of a resource whose actions are `[\"delete\", \"create\"]`."}
}

func protectRunningAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
		MarkdownDescription: "With true, a plan that would replace or destroy the job while it is `RUNNING` fails, naming what forces " +
			"the replacement, what the job holds and how long it has run. A finished, queued, suspended or pending job is not held. The " +
			"ways through, on purpose: `terraform apply -replace=ADDRESS` with the configuration otherwise unchanged, or `protect_running " +
			"= false` in the same apply as the change (or in an apply before a destroy). Default false. Changing it changes nothing in " +
			"the cluster."}
}

// accelerators is how many units of its GPU resource the pods of job m hold, as its spec builds
// them; a TrainJob's, whose pods are its runtime's, are its gpus on each of its nodes.
func accelerators(ctx context.Context, m jobModel) int64 {
	p := m.pod()
	spec, diags := m.spec(ctx)
	if diags.HasError() {
		return 0
	}
	if obj, _, err := spec.Build(); err == nil {
		if roles, err := spec.Kind().Roles(obj, nil); err == nil {
			return jobs.Accelerators(roles, gpuResource(p))
		}
	}
	return p.GPUs.ValueInt64() * m.workers().ValueInt64()
}

// gpuResource is the pods' GPU resource: theirs, or the default.
func gpuResource(p *podModel) string {
	return cmp.Or(p.GPUResourceName.ValueString(), jobs.DefaultGPUResource)
}

// atStake says what stopping the running job of state m stops: its accelerators and pods, how
// long it has run, and the accelerator-hours, as of the plan's refresh.
func atStake(ctx context.Context, m jobModel) string {
	f := m.job()
	pods := len(f.Instances.Elements())
	n := accelerators(ctx, m)
	if n == 0 {
		return fmt.Sprintf("It holds %d pods and has run for %s.", pods, f.Duration.ValueString())
	}
	hours, _ := f.AcceleratorHours.ValueBigFloat().Float64()
	return fmt.Sprintf("It holds %d %s on %d pods and has run for %s: %.2f accelerator-hours.", n, gpuResource(m.pod()), pods,
		f.Duration.ValueString(), hours)
}

// guardRunning fails the plan that replaces or destroys a running job whose state says
// protect_running (a destroy) or whose plan does (a replacement: turning it off in the same apply
// lets the change through), naming the attributes that force the replacement.
func guardRunning(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, p planned) {
	prior, next, forcing := p.prior, p.next, p.forcing
	if prior == nil || !p.replacing() && !req.Plan.Raw.IsNull() || prior.job().Status.ValueString() != jobs.Running {
		return
	}
	protected := prior.job().ProtectRunning.ValueBool()
	if !req.Plan.Raw.IsNull() {
		if next == nil {
			return
		}
		protected = next.job().ProtectRunning.ValueBool()
	}
	if !protected {
		return
	}
	job := fmt.Sprintf("%s/%s", prior.job().Namespace.ValueString(), prior.job().Name.ValueString())
	if req.Plan.Raw.IsNull() {
		resp.Diagnostics.AddError("Running job "+job+" is protected from destroy",
			"protect_running is true and the job is RUNNING: destroying it would stop its training. "+atStake(ctx, prior)+
				" To destroy it on purpose, apply protect_running = false first, then destroy; or wait until it has finished.")
		return
	}
	why := "a change"
	if len(forcing) > 0 {
		why = "a change of " + strings.Join(forcing, ", ")
	}
	resp.Diagnostics.AddAttributeError(path.Root("protect_running"), "Running job "+job+" is protected from replacement",
		fmt.Sprintf("protect_running is true and the job is RUNNING: %s replaces it, which stops its training. %s To replace it on "+
			"purpose, set protect_running = false in the same apply as the change; to restart it with its configuration unchanged, "+
			"terraform apply -replace=ADDRESS.", why, atStake(ctx, prior)))
}

// warnDestroyedTraining says in the plan that destroys a running job what stops, and whether its
// training can be taken up again: from its checkpoint, which destroy leaves where it is, or not.
func warnDestroyedTraining(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, p planned) {
	prior := p.prior
	if !req.Plan.Raw.IsNull() || prior == nil ||
		prior.job().Status.ValueString() != jobs.Running || prior.job().ProtectRunning.ValueBool() {
		return
	}
	job := fmt.Sprintf("%s/%s", prior.job().Namespace.ValueString(), prior.job().Name.ValueString())
	var diags diag.Diagnostics
	then := "It declares no checkpoint: those hours of training are lost."
	if c := checkpointOf(ctx, prior.pod().Checkpoint, &diags); c != nil {
		then = fmt.Sprintf("Its pods are given %s to save to %s (%s), which destroy leaves as it is: a job made again with that "+
			"checkpoint resumes from the last save the program made.", grace(prior.pod().GracePeriod), c.Path, checkpointStore(ctx, prior, c.Path).Volume)
	}
	resp.Diagnostics.AddWarning("Destroying running job "+job+" stops its training", atStake(ctx, prior)+" "+then)
}

// warnReplacedTraining says in the plan of a replacement what becomes of the job's training. A
// running job: with a checkpoint, that the pods stop with their grace to save and whether the new
// job finds it; without one, that the training starts again from the beginning. A job that is
// stopped (queued, preempted, suspended, failed) and holds a checkpoint: whether the new job
// finds it. A finished one: that its training runs again.
func warnReplacedTraining(ctx context.Context, resp *resource.ModifyPlanResponse, p planned) {
	prior, next := p.prior, p.next
	if !p.replacing() || prior == nil || next == nil {
		return
	}
	status := prior.job().Status.ValueString()
	was, will := prior.pod(), next.pod()
	var diags diag.Diagnostics
	old := checkpointOf(ctx, was.Checkpoint, &diags)
	job := fmt.Sprintf("%s/%s", prior.job().Namespace.ValueString(), prior.job().Name.ValueString())
	known := !will.Checkpoint.IsUnknown() && !will.DataVolumes.IsUnknown()
	why, same := "", false
	var store jobs.CheckpointStore
	if old != nil && known {
		store = checkpointStore(ctx, prior, old.Path)
		planned := checkpointOf(ctx, will.Checkpoint, &diags)
		var to jobs.CheckpointStore
		if planned != nil {
			to = checkpointStore(ctx, next, planned.Path)
		}
		why, same = jobs.SameCheckpoint(*old, store, planned, to)
	}
	resumes := fmt.Sprintf("The job made in its place mounts %s again and resumes from %s if its program loads it on start.", store, pathOf(old))
	switch {
	case store.Keeping == jobs.Trusted && store.MountPath == "":
		resumes = fmt.Sprintf("The job made in its place saves to %s too, and resumes from it if its program loads it on start. ", pathOf(old)) + trusted(pathOf(old), store)
	case store.Keeping == jobs.Trusted:
		resumes += " " + trusted(pathOf(old), store)
	}
	loses := fmt.Sprintf("But %s, so the job made in its place does not find it and starts from the beginning. Keep the checkpoint's "+
		"path and the volume it is on to resume.", why)
	switch {
	case jobs.Finished(status) && known:
		again := "It declares no checkpoint: the job made in its place starts from the beginning."
		switch {
		case old != nil && same:
			again = "Its checkpoint at " + old.Path + " holds where the last run ended. " + resumes
		case old != nil:
			again = "Its checkpoint at " + old.Path + " holds where the last run ended. " + loses
		}
		resp.Diagnostics.AddWarning("Replacing "+strings.ToLower(status)+" job "+job+" runs its training again",
			"The job has "+status+" and will not run again by itself: the job made in its place runs the training again. "+again+
				" To change the configuration without running it, remove the job from the configuration instead (terraform state rm "+
				"keeps it in the cluster).")
	case old == nil && status == jobs.Running:
		resp.Diagnostics.AddWarning("Replacing running job "+job+" starts its training from the beginning",
			"The job is RUNNING and declares no checkpoint. "+atStake(ctx, prior)+" Its pods are stopped with the grace they have ("+
				grace(was.GracePeriod)+") and the job made in its place starts from step 0: those hours of training are lost, unless its "+
				"program finds a checkpoint of its own. To resume instead, save to a volume that outlives the pods or to object storage and "+
				"declare it: checkpoint = { path, save_seconds } gives the pods the time to save.")
	case old == nil || !known:
	case status == jobs.Running:
		stop := fmt.Sprintf("%s Its pods are sent SIGTERM and given %s to save to %s (%s). ", atStake(ctx, prior), grace(was.GracePeriod), old.Path, store.Volume)
		if p.stop == jobs.StopOpenMPI {
			stop += "Its ranks are sent SIGTERM first under Open MPI 4 or 5; under MPICH or Intel MPI they end with their pods, without that time. "
		}
		if !same {
			resp.Diagnostics.AddWarning("Replacing running job "+job+" loses its checkpoint", stop+loses)
			return
		}
		resp.Diagnostics.AddWarning("Replacing running job "+job+": its training stops to resume from its checkpoint", stop+resumes)
	case status == jobs.Queued || status == jobs.Suspended:
		stopped := fmt.Sprintf("The job is %s: what a run of it saved when it was stopped (preempted, suspended) is at %s (%s). ",
			status, old.Path, store.Volume)
		if !same {
			resp.Diagnostics.AddWarning("Replacing "+strings.ToLower(status)+" job "+job+" loses its checkpoint", stopped+loses)
			return
		}
		resp.Diagnostics.AddWarning("Replacing "+strings.ToLower(status)+" job "+job+": its training resumes from its checkpoint", stopped+resumes)
	}
}

// checkpointStore is where the job m saves a checkpoint at p, as the pods it builds show
// (jobs.CheckpointStoreOf); where they cannot be built without the cluster (a TrainJob's, whose
// pods are its runtime's), only its data_volumes are known (jobs.DataVolumesStore).
func checkpointStore(ctx context.Context, m jobModel, p string) jobs.CheckpointStore {
	fallback := jobs.DataVolumesStore(p, dataVolumesOf(ctx, m.pod().DataVolumes))
	spec, diags := m.spec(ctx)
	if diags.HasError() {
		return fallback
	}
	obj, _, err := spec.Build()
	if err != nil {
		return fallback
	}
	roles, err := spec.Kind().Roles(obj, nil)
	if err != nil {
		return fallback
	}
	return jobs.CheckpointStoreOf(p, roles)
}

// pathOf is the checkpoint's path, "" for none.
func pathOf(c *jobs.Checkpoint) string {
	if c == nil {
		return ""
	}
	return c.Path
}

// grace says a pods' termination grace: theirs, or Kubernetes' default.
func grace(v types.Int64) string {
	if v.IsNull() || v.IsUnknown() {
		return "Kubernetes' default grace of 30 seconds"
	}
	return fmt.Sprintf("%d seconds", v.ValueInt64())
}

// sayStopped says, after destroy or a replacement stopped a job with a checkpoint, how long its
// pods took, and warns when they took the whole grace: the kubelet then killed the program,
// perhaps in the middle of its save.
func sayStopped(diags *diag.Diagnostics, job string, m *podModel, took time.Duration) {
	var ignored diag.Diagnostics
	c := checkpointOf(context.Background(), m.Checkpoint, &ignored)
	if c == nil || m.GracePeriod.IsNull() {
		return
	}
	limit := time.Duration(m.GracePeriod.ValueInt64()) * time.Second
	took = took.Round(time.Second)
	if took >= limit {
		diags.AddWarning(job+" was killed at the end of its grace",
			fmt.Sprintf("Its pods took %s to stop, the whole grace of %s: the kubelet killed what still ran, perhaps during its save to %s. "+
				"Check that the program saves when it is sent SIGTERM and exits after, and that checkpoint.save_seconds (%d) covers a save.",
				took, limit, c.Path, c.SaveSeconds))
		return
	}
	diags.AddWarning(job+" stopped within its grace",
		fmt.Sprintf("Its pods stopped in %s of their %s grace, so the program had the time to save to %s.", took, limit, c.Path))
}
