package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

const defaultTimeout = 10 * time.Minute

// jobResource is what every job resource embeds: the client, set by Configure.
type jobResource struct {
	client *kube.Client
}

func (r *jobResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// clientFrom takes the client out of the provider data handed to resources and data sources;
// nil data (validation before the provider is configured) gives a nil client.
func clientFrom(data any, diags *diag.Diagnostics) *kube.Client {
	if data == nil {
		return nil
	}
	client, ok := data.(*kube.Client)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *kube.Client, got %T. This is a bug in the provider; please report this issue.", data))
	}
	return client
}

// waitOrObserve waits as wait_for says, with running deciding when a job runs, and returns what
// it last saw of the job. written is the object as the create or patch returned it: without a
// wait it is the job's state, and pods are listed only after a rescale (a new job has none yet),
// which saves a GET and a LIST per job. A failed wait is reported in diags, and the job is read
// anyway so its status can be recorded: after a timeout ctx is spent, so the read gets a moment
// of its own.
func (r *jobResource) waitOrObserve(ctx context.Context, t kube.Target, waitFor, action string, written *unstructured.Unstructured,
	running func(jobs.Observed) (bool, error), diags *diag.Diagnostics) (jobs.Observed, bool) {
	var observed jobs.Observed
	if waitFor != waitRunning && written != nil {
		observed.Object = written
		if action != actionCreate {
			pods, err := r.client.Pods(ctx, t)
			if err != nil {
				diags.AddError("Error reading "+t.String(), err.Error())
				return observed, false
			}
			observed.Pods = pods
		}
		return observed, true
	}
	if waitFor == waitRunning {
		var err error
		observed, err = r.client.Until(ctx, t, running)
		if err != nil {
			diags.AddError(fmt.Sprintf("Error waiting for %s to run (%s)", t, action), waitError(err, observed))
		}
	}
	if observed.Object != nil {
		return observed, true
	}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	observed, err := r.client.Observe(readCtx, t)
	if err != nil {
		diags.AddError("Error reading "+t.String(), err.Error())
		return observed, false
	}
	if observed.Object == nil {
		diags.AddError(t.Kind+" disappeared", fmt.Sprintf("%s was deleted by someone else while Terraform was working on it.", t))
		return observed, false
	}
	return observed, true
}

// deleteJob deletes the job object Terraform made (uid), with its TensorBoard, and waits within
// the delete timeout until they and their pods are gone. dependents (an elastic job's Services)
// are deleted by name too, as an imported job's may have no owner reference; but only those
// that are the job's, owned by it or made by this provider: one of that name that is somebody
// else's is left alone, with a warning.
func (r *jobResource) deleteJob(ctx context.Context, t kube.Target, uid types.String, timeout timeouts.Value, f tensorBoardFields,
	dependents []kube.Target, diags *diag.Diagnostics) {
	limit, d := timeout.Delete(ctx, defaultTimeout)
	diags.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := r.client.Delete(ctx, t, k8stypes.UID(uid.ValueString())); err != nil {
		diags.AddError("Error deleting "+t.String(), err.Error())
		return
	}
	targets := f.deletionTargets(t)
	for _, dependent := range dependents {
		left, err := r.client.DeleteIf(ctx, dependent, func(obj *unstructured.Unstructured) bool { return ownedBy(obj, t) || jobs.IsManaged(obj) })
		if err != nil {
			diags.AddError("Error deleting "+dependent.String(), err.Error())
			return
		}
		if left != nil {
			diags.AddWarning(dependent.Kind+" left in place",
				fmt.Sprintf("%s was not created by this provider and is not owned by %s, so destroy did not delete it.", dependent, t))
			continue
		}
		targets = append(targets, dependent)
	}
	r.waitDeleted(ctx, diags, targets...)
}

// ownedBy says whether obj has an owner reference to the target's object.
func ownedBy(obj *unstructured.Unstructured, owner kube.Target) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == owner.Kind && ref.Name == owner.Name {
			return true
		}
	}
	return false
}

// waitDeleted waits until each target object and the pods its selector matches are gone.
func (r *jobResource) waitDeleted(ctx context.Context, diags *diag.Diagnostics, targets ...kube.Target) {
	for _, t := range targets {
		observed, err := r.client.UntilGone(ctx, t)
		if err == nil {
			continue
		}
		var left []string
		if observed.Object != nil {
			left = append(left, t.String())
		}
		for _, p := range observed.Pods {
			left = append(left, "pod "+p.Name)
		}
		diags.AddError("Error waiting for "+t.String()+" to be deleted",
			fmt.Sprintf("%v; still there: %s. Running terraform destroy again resumes the wait.", err, strings.Join(left, ", ")))
		return
	}
}

func uidAttribute() schema.Attribute {
	return schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		MarkdownDescription: "UID of the job object. A job of the same name that is not this object (deleted and made again outside " +
			"Terraform) is not taken for this resource: refresh drops the resource with a warning, and destroy never deletes it."}
}

// replacedOutside says, with a warning, whether obj is not the object this resource created or
// imported but one of the same name made since outside Terraform; the caller then drops the
// resource from state, so the next plan shows a create that the new object will refuse.
func replacedOutside(t kube.Target, uid types.String, obj *unstructured.Unstructured, diags *diag.Diagnostics) bool {
	// ValueString is "" for a null or unknown UID (a state from before uid was recorded).
	if uid.ValueString() == "" || k8stypes.UID(uid.ValueString()) == obj.GetUID() {
		return false
	}
	diags.AddWarning(t.Kind+" replaced outside Terraform",
		fmt.Sprintf("%s is no longer the object Terraform created (uid %s): it was deleted and made again (uid %s) outside Terraform. "+
			"Terraform no longer manages it and will not change or delete it; import it to take it over.", t, uid.ValueString(), obj.GetUID()))
	return true
}

// observeForRead reads the job for Read, with its pods if withPods. It returns nil when the
// resource is done with: the read failed, the job is gone (the resource is dropped from state,
// or kept with a warning if it had finished) or was replaced outside Terraform (dropped, with a
// warning). Otherwise uid is updated to the job's.
func (r *jobResource) observeForRead(ctx context.Context, t kube.Target, withPods bool, status types.String, uid *types.String,
	resp *resource.ReadResponse) *jobs.Observed {
	var observed jobs.Observed
	var err error
	if withPods {
		observed, err = r.client.Observe(ctx, t)
	} else {
		observed.Object, err = r.client.Get(ctx, t)
	}
	if err != nil {
		resp.Diagnostics.AddError("Error reading "+t.String(), err.Error())
		return nil
	}
	if observed.Object == nil {
		if !goneAfterFinishing(t, status, &resp.Diagnostics) {
			resp.State.RemoveResource(ctx)
		}
		return nil
	}
	if replacedOutside(t, *uid, observed.Object, &resp.Diagnostics) {
		resp.State.RemoveResource(ctx)
		return nil
	}
	*uid = types.StringValue(string(observed.Object.GetUID()))
	return &observed
}

// goneAfterFinishing keeps a finished job that is gone from the cluster in state, with a
// warning, rather than letting the next apply silently run the training again.
func goneAfterFinishing(t kube.Target, status types.String, diags *diag.Diagnostics) bool {
	if !jobs.Finished(status.ValueString()) {
		return false
	}
	diags.AddWarning("Finished job is gone from the cluster",
		fmt.Sprintf("%s finished (%s) and was then deleted, for example by a TTL or its operator's retention. It stays in state so "+
			"that Terraform does not run it again; to run it again, use terraform apply -replace=<address>.", t, status.ValueString()))
	return true
}

func importNamespacedName(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	namespace, name, err := splitID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), namespace+"/"+name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), namespace)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for"), waitRunning)...)
}

// perGPUDefault plans an unset count (MPI slots, torchelastic processes per worker) as one per
// GPU of the worker, at least one, so the plan shows the value the job will get.
type perGPUDefault struct{}

func (perGPUDefault) Description(context.Context) string {
	return "defaults to the GPUs per worker, at least 1"
}
func (d perGPUDefault) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (perGPUDefault) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	var gpus types.Int64
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("gpus"), &gpus)...)
	if gpus.IsUnknown() {
		return
	}
	resp.PlanValue = types.Int64Value(int64(jobs.DefaultSlots(gpus.ValueInt64())))
}

// alreadyExistsDetail says what to do when an object cannot be created. The client has already
// adopted an object of that name if this provider created it from the same configuration, so
// one that still stands in the way is being deleted, is a leftover from another configuration,
// or is somebody else's: the provider does not take it over silently.
func alreadyExistsDetail(t kube.Target, importID string, err error) string {
	var exists *kube.ExistsError
	if !errors.As(err, &exists) {
		return err.Error()
	}
	existing := exists.Existing
	switch {
	case existing != nil && existing.GetDeletionTimestamp() != nil:
		return fmt.Sprintf("%s already exists and is being deleted (an earlier destroy or replacement). Run terraform apply again once it is gone.", t)
	case existing != nil && jobs.IsManaged(existing):
		return fmt.Sprintf("%s already exists: this provider created it, but from a different configuration (perhaps an apply that was "+
			"interrupted, or another workspace). It was not changed. Take it over with: terraform import <address> %s (or delete it)", t, importID)
	}
	return fmt.Sprintf("%s already exists and was not created by this provider, so it was not changed. Choose another name, "+
		"or take the job over with: terraform import <address> %s", t, importID)
}

// Actions, as waits name them in errors.
const (
	actionCreate  = "create"
	actionRescale = "rescale"
)

// update is Update for every job resource, whose only in-place change is the worker count: it
// rescales the job from the state's count to the plan's within the update timeout, then
// settle waits as wait_for says and records the job in the plan.
func (r *jobResource) update(ctx context.Context, t kube.Target, from, to types.Int64, timeout timeouts.Value,
	patch func(from, to int32) []byte, workers func(*unstructured.Unstructured) (int32, error), diags *diag.Diagnostics,
	settle func(ctx context.Context, patched *unstructured.Unstructured)) {
	limit, d := timeout.Update(ctx, defaultTimeout)
	diags.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	current, desired := int32(from.ValueInt64()), int32(to.ValueInt64())
	patched, ok := r.rescale(ctx, t, current, desired, patch(current, desired), workers, diags)
	if ok {
		settle(ctx, patched)
	}
}

// rescale applies a guarded rescale patch (see jobs.MPIRescalePatch, jobs.ElasticRescalePatch)
// and returns the patched object, or nil with ok when there was nothing to change. The API
// server answers 422 when a test op fails: the count is no longer the one Terraform read. That
// is either this rescale's own earlier attempt, which landed although its answer was lost (the
// count is already the new one: done), or someone else's change, which is not overwritten and is
// reported with the count found; workers reads the count from the job.
func (r *jobResource) rescale(ctx context.Context, t kube.Target, from, to int32, patch []byte,
	workers func(*unstructured.Unstructured) (int32, error), diags *diag.Diagnostics) (patched *unstructured.Unstructured, ok bool) {
	if from == to {
		return nil, true
	}
	patched, err := r.client.Patch(ctx, t, k8stypes.JSONPatchType, patch)
	if err == nil {
		return patched, true
	}
	detail := err.Error()
	if apierrors.IsInvalid(err) {
		current, getErr := r.client.Get(ctx, t)
		if getErr != nil || current == nil {
			diags.AddError("Error rescaling "+t.String(), fmt.Sprintf("%v; reading the job again to see why also failed: %v", err, getErr))
			return nil, false
		}
		now, countErr := workers(current)
		switch {
		case countErr == nil && now == to:
			return current, true
		case countErr == nil && now != from:
			detail = fmt.Sprintf("%s was not rescaled from %d to %d workers: someone else changed its worker count to %d after Terraform "+
				"read it as %d. Their change was kept and nothing was changed; run terraform plan again to see the difference.",
				t, from, to, now, from)
		default:
			detail = fmt.Sprintf("%s was not rescaled from %d to %d workers: the API server rejected the patch: %v", t, from, to, err)
		}
	}
	diags.AddError("Error rescaling "+t.String(), detail)
	return nil, false
}

// runPolicyModel holds what every Kubeflow job resource (MPI, TF) says besides its replicas:
// where it lives, its run policy, its queue and what apply waits for.
type runPolicyModel struct {
	ID                      types.String `tfsdk:"id"`
	UID                     types.String `tfsdk:"uid"`
	Namespace               types.String `tfsdk:"namespace"`
	CleanPodPolicy          types.String `tfsdk:"clean_pod_policy"`
	TTLSecondsAfterFinished types.Int64  `tfsdk:"ttl_seconds_after_finished"`
	BackoffLimit            types.Int64  `tfsdk:"backoff_limit"`
	ActiveDeadlineSeconds   types.Int64  `tfsdk:"active_deadline_seconds"`
	QueueName               types.String `tfsdk:"queue_name"`
	WaitFor                 types.String `tfsdk:"wait_for"`
}

func runPolicyAttributes(retried string) map[string]schema.Attribute {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceInt := []planmodifier.Int64{int64planmodifier.RequiresReplace()}
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "`namespace/name` of the job."},
		"uid": uidAttribute(),
		"namespace": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("default"),
			PlanModifiers: replaceString, Validators: []validator.String{namespaceRule},
			MarkdownDescription: "Namespace of the job. Default `default`."},
		"clean_pod_policy": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("Running"),
			PlanModifiers: replaceString, Validators: []validator.String{stringvalidator.OneOf(jobs.CleanPodPolicies...)},
			MarkdownDescription: "Which pods to delete when the job finishes: `None`, `Running` or `All`. Default `Running`, " +
				"so that pods left running (an MPI worker's SSH daemon, a parameter server) do not hold their GPUs."},
		"ttl_seconds_after_finished": schema.Int64Attribute{Optional: true, PlanModifiers: replaceInt,
			Validators: []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Seconds after which the operator cleans up a finished job. " +
				"Whenever a finished job is gone from the cluster, the resource stays in state with a warning rather than re-running; " +
				"`terraform apply -replace` runs it again."},
		"backoff_limit": schema.Int64Attribute{Optional: true, PlanModifiers: replaceInt,
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Retries of " + retried + " before the job is marked failed."},
		"active_deadline_seconds": schema.Int64Attribute{Optional: true, PlanModifiers: replaceInt,
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
			MarkdownDescription: "Seconds the job may run before it is stopped and marked failed."},
		"queue_name": schema.StringAttribute{Optional: true, PlanModifiers: replaceString, Validators: []validator.String{labelValueRule},
			MarkdownDescription: "Kueue LocalQueue to submit the job to (label `" + jobs.QueueLabel + "`)."},
		"wait_for": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(waitRunning),
			Validators: []validator.String{stringvalidator.OneOf(waitCreated, waitRunning)},
			MarkdownDescription: "What create and update wait for: `created` (the job is accepted) or `running` (every pod of the job, " +
				"exactly `worker_count` workers, Running, and the operator reporting it running). Default `running`. A job that fails, " +
				"or that its operator rejects, ends the wait at once with the reason."},
	}
}

func (m runPolicyModel) runPolicy() (cleanPodPolicy string, ttl, backoff *int32, deadline *int64, queue string) {
	if !m.TTLSecondsAfterFinished.IsNull() {
		ttl = ptr.To(int32(m.TTLSecondsAfterFinished.ValueInt64()))
	}
	if !m.BackoffLimit.IsNull() {
		backoff = ptr.To(int32(m.BackoffLimit.ValueInt64()))
	}
	return m.CleanPodPolicy.ValueString(), ttl, backoff, m.ActiveDeadlineSeconds.ValueInt64Pointer(), m.QueueName.ValueString()
}

func (m *runPolicyModel) setRunPolicy(cleanPodPolicy string, ttl, backoff *int32, deadline *int64, queue string) {
	m.CleanPodPolicy = types.StringValue(cleanPodPolicy)
	m.QueueName = optionalString(queue)
	m.TTLSecondsAfterFinished = optionalInt(ttl)
	m.BackoffLimit = optionalInt(backoff)
	m.ActiveDeadlineSeconds = types.Int64PointerValue(deadline)
}

func optionalInt(p *int32) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}

// tensorBoardFields are the TensorBoard block and URL every job resource has, as Arena's
// --tensorboard and --logdir.
type tensorBoardFields struct {
	TensorBoard    []tensorBoardModel `tfsdk:"tensorboard"`
	TensorBoardURL types.String       `tfsdk:"tensorboard_url"`
}

type tensorBoardModel struct {
	LogDir types.String `tfsdk:"log_dir"`
	Image  types.String `tfsdk:"image"`
}

func tensorBoardBlock() schema.Block {
	return schema.ListNestedBlock{
		MarkdownDescription: "A TensorBoard for the job (Arena: `--tensorboard --logdir`): a Deployment and a NodePort Service named `NAME-tensorboard`, " +
			"with the job's tolerations, node selector and data volumes (put the log directory on one), owned by the job so they are removed with it.",
		PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
		Validators:    []validator.List{listvalidator.SizeAtMost(1)},
		NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
			"log_dir": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
				MarkdownDescription: "Directory TensorBoard reads, e.g. `/training_logs` on one of `data_volumes`."},
			"image": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.DefaultTensorBoardImage),
				MarkdownDescription: "TensorBoard's image. Default `" + jobs.DefaultTensorBoardImage + "`."},
		}},
	}
}

func tensorBoardURLAttribute() schema.Attribute {
	return schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		MarkdownDescription: "Where the TensorBoard answers, like `arena get` prints it: `http://NODE_ADDRESS:NODE_PORT`; null without a `tensorboard` block."}
}

func tensorBoardTarget(namespace, job string) kube.Target {
	return kube.Target{GVR: jobs.DeploymentGVR, Kind: "Deployment", Namespace: namespace, Name: jobs.TensorBoardName(job),
		PodSelector: jobs.TensorBoardLabel + "=" + job}
}

// createTensorBoard creates the job's TensorBoard, if it has one, owned by the job object, and
// records its URL.
func (r *jobResource) createTensorBoard(ctx context.Context, f *tensorBoardFields, job *unstructured.Unstructured, pod jobs.PodOptions, diags *diag.Diagnostics) {
	f.TensorBoardURL = types.StringNull()
	if len(f.TensorBoard) == 0 {
		return
	}
	tb := jobs.TensorBoardSpec{LogDir: f.TensorBoard[0].LogDir.ValueString(), Image: f.TensorBoard[0].Image.ValueString()}
	owner := metav1.OwnerReference{APIVersion: job.GetAPIVersion(), Kind: job.GetKind(), Name: job.GetName(), UID: job.GetUID(),
		BlockOwnerDeletion: ptr.To(true)}
	deployment, service, err := jobs.NewTensorBoard(job.GetName(), job.GetNamespace(), tb, pod, owner)
	if err != nil {
		diags.AddError("Invalid TensorBoard", err.Error())
		return
	}
	t := tensorBoardTarget(job.GetNamespace(), job.GetName())
	if _, err := r.client.Create(ctx, t, deployment); err != nil {
		diags.AddError("Error creating TensorBoard", err.Error())
		return
	}
	svcTarget := t
	svcTarget.GVR, svcTarget.Kind = jobs.ServiceGVR, "Service"
	created, err := r.client.Create(ctx, svcTarget, service)
	if err != nil {
		diags.AddError("Error creating TensorBoard Service", err.Error())
		return
	}
	f.TensorBoardURL = types.StringValue(jobs.TensorBoardURL(created, r.nodeAddress(ctx)))
}

// nodeAddress is the InternalIP of a Ready node, for NodePort URLs; "" when there is none.
func (r *jobResource) nodeAddress(ctx context.Context) string {
	nodes, err := r.client.Nodes(ctx, "")
	if err != nil {
		return ""
	}
	for _, n := range nodes {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && a.Address != "" {
				return a.Address
			}
		}
	}
	return ""
}

// deletionTargets are what destroying a job waits for: the job and its pods, and its
// TensorBoard and that pod.
func (f tensorBoardFields) deletionTargets(job kube.Target) []kube.Target {
	targets := []kube.Target{job}
	if len(f.TensorBoard) > 0 {
		targets = append(targets, tensorBoardTarget(job.Namespace, job.Name))
	}
	return targets
}
