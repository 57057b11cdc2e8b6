package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// What a TrainJob reads of its runtime. Its runtime patch replaces the grace of every pod its
// runtime makes: the grace a TrainJob sets must cover its own checkpoint's save under the
// runtime's launcher (twice the save under mpirun) and whatever the runtime's pods need themselves
// (jobs.TrainJobGrace). The plan decides it where it can read the runtime; the create, where the
// runtime is made by the apply.

var gracePath = path.Root("termination_grace_period_seconds")

// planGraceOnRuntime plans termination_grace_period_seconds of a TrainJob to be created or whose
// checkpoint or grace changes: unset with a checkpoint, it is what jobs.TrainJobGrace says on the
// runtime as the cluster has it; set shorter than that, it is refused. It warns when the job and
// its runtime declare saves of different lengths. A runtime not readable yet leaves the grace to
// the create (known after apply).
func (r *trainJobResource) planGraceOnRuntime(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, plan, was *trainJobModel) {
	if r.client == nil || req.Plan.Raw.IsNull() || plan.Checkpoint.IsUnknown() {
		return
	}
	var configured types.Int64
	if req.Config.GetAttribute(ctx, gracePath, &configured).HasError() || configured.IsUnknown() {
		return
	}
	if was != nil && was.Checkpoint.Equal(plan.Checkpoint) && was.GracePeriod.Equal(plan.GracePeriod) {
		return // a running job's grace is not decided again when its runtime changes
	}
	var diags diag.Diagnostics
	c := checkpointOf(ctx, plan.Checkpoint, &diags)
	if c == nil && configured.IsNull() {
		return
	}
	obj, err := plan.runtime(ctx, r.client)
	if err != nil || obj == nil {
		return
	}
	runtime, err := jobs.ReadRuntime(obj)
	if err != nil {
		return
	}
	if rc := runtime.Pod.Checkpoint; c != nil && rc != nil && rc.SaveSeconds != c.SaveSeconds {
		resp.Diagnostics.AddAttributeWarning(path.Root("checkpoint"), "The job's save and its runtime's differ",
			fmt.Sprintf("checkpoint.save_seconds is %d, and %s %s declares a save of %d seconds: the pods get the grace of the longer, "+
				"but what the runtime's pods do at a stop follows the runtime's (under mpirun, its launcher's daemons give the ranks %d "+
				"seconds after their SIGTERM). Declare the same save on both.", c.SaveSeconds, obj.GetKind(), obj.GetName(), rc.SaveSeconds, rc.SaveSeconds))
	}
	need := jobs.TrainJobGrace(c, runtime)
	switch {
	case configured.IsNull():
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, gracePath, types.Int64Value(need))...)
	case configured.ValueInt64() < need:
		resp.Diagnostics.AddAttributeError(gracePath, "Grace too short for the job's runtime",
			fmt.Sprintf("termination_grace_period_seconds (%d) replaces the grace of every pod %s %s makes, and is shorter than the %d seconds "+
				"%s: the pods would be killed before the save ends. Raise it to at least %d, or leave it unset (it then defaults to that).",
				configured.ValueInt64(), obj.GetKind(), obj.GetName(), need, graceNeeds(c, runtime), need))
	}
}

// graceNeeds says, in words, what TrainJobGrace counted.
func graceNeeds(c *jobs.Checkpoint, runtime jobs.RuntimeSpec) string {
	launcher := ""
	if runtime.Framework == jobs.FrameworkMPI {
		launcher = " under mpirun, whose daemons wait the save once before they signal the ranks"
	}
	switch {
	case c != nil && runtime.Pod.Checkpoint != nil:
		return fmt.Sprintf("the job's save of %d seconds and the runtime's of %d need%s", c.SaveSeconds, runtime.Pod.Checkpoint.SaveSeconds, launcher)
	case c != nil:
		return fmt.Sprintf("its save of %d seconds needs%s", c.SaveSeconds, launcher)
	case runtime.Pod.Checkpoint != nil:
		return fmt.Sprintf("the runtime's save of %d seconds needs%s", runtime.Pod.Checkpoint.SaveSeconds, launcher)
	}
	return "the runtime gives its pods"
}

// graceOnRuntime decides, at create, the grace the plan could not (its runtime was not there yet):
// what jobs.TrainJobGrace says on the runtime read now; a configured grace shorter fails the create
// before anything is made.
func (m *trainJobModel) graceOnRuntime(ctx context.Context, obj *unstructured.Unstructured, diags *diag.Diagnostics) bool {
	if !m.GracePeriod.IsUnknown() {
		return true
	}
	runtime, err := jobs.ReadRuntime(obj)
	if err != nil {
		diags.AddAttributeError(path.Root("runtime"), "Error reading "+obj.GetKind()+" "+obj.GetName(), err.Error()+". Nothing was created.")
		return false
	}
	c := checkpointOf(ctx, m.Checkpoint, diags)
	if need := jobs.TrainJobGrace(c, runtime); need > 0 {
		m.GracePeriod = types.Int64Value(need)
	} else {
		m.GracePeriod = types.Int64Null()
	}
	return !diags.HasError()
}

// runtimeTarget is the job's runtime, and where it is, in words; known is false while the plan
// does not know it yet.
func (m *trainJobModel) runtimeTarget() (t kube.Target, where string, known bool) {
	known = !m.Runtime.IsUnknown() && !m.RuntimeKind.IsUnknown() && !m.Namespace.IsUnknown()
	kind := m.RuntimeKind.ValueString()
	t = kube.Target{GVR: jobs.ClusterTrainingRuntimeGVR, Kind: kind, Name: m.Runtime.ValueString()}
	if kind == jobs.TrainingRuntimeKind {
		t.GVR, t.Namespace = jobs.TrainingRuntimeGVR, m.Namespace.ValueString()
		return t, "namespace " + t.Namespace, known
	}
	return t, "the cluster", known
}

// runtime reads the job's runtime (for create, and for the placement check: runtimePlaced),
// once per model, and keeps its replicated jobs, which the runtime patch places. It reads
// nothing while the runtime's name is not known yet (a plan).
func (m *trainJobModel) runtime(ctx context.Context, c *kube.Client) (*unstructured.Unstructured, error) {
	t, _, known := m.runtimeTarget()
	if !known {
		return nil, nil
	}
	if m.readRuntime != nil && m.readRuntime.GetName() == t.Name && m.readRuntime.GetKind() == t.Kind && m.readRuntime.GetNamespace() == t.Namespace {
		return m.readRuntime, nil
	}
	obj, err := c.Get(ctx, t)
	if obj != nil {
		m.runtimeJobs, m.readRuntime = jobs.RuntimeJobs(obj), obj
	}
	return obj, err
}
