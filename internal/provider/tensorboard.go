package provider

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// tensorBoardFields are the TensorBoard and its URL every job resource with one has, as Arena's
// --tensorboard and --logdir (every kind but the TrainJob).
type tensorBoardFields struct {
	TensorBoard    *tensorBoardModel `tfsdk:"tensorboard"`
	TensorBoardURL types.String      `tfsdk:"tensorboard_url"`
}

// withTensorBoard is a job model with a TensorBoard.
type withTensorBoard interface {
	tensorBoard() *tensorBoardFields
}

func (f *tensorBoardFields) tensorBoard() *tensorBoardFields { return f }

// tensorBoardOf is the model's TensorBoard fields, nil for a kind without.
func tensorBoardOf(m jobModel) *tensorBoardFields {
	if t, ok := m.(withTensorBoard); ok {
		return t.tensorBoard()
	}
	return nil
}

type tensorBoardModel struct {
	LogDir       types.String `tfsdk:"log_dir"`
	Image        types.String `tfsdk:"image"`
	ServiceType  types.String `tfsdk:"service_type"`
	DataVolume   types.String `tfsdk:"data_volume"`
	NodeSelector types.Map    `tfsdk:"node_selector"`
	Tolerations  types.List   `tfsdk:"tolerations"`
}

func tensorBoardAttribute() schema.Attribute {
	return schema.SingleNestedAttribute{Optional: true,
		MarkdownDescription: "A TensorBoard for the job: a Deployment and a Service named `NAME-tensorboard`, " +
			"owned by the job so they are removed with it. It is a CPU helper no training depends on: it takes neither the job's priority class " +
			"nor its tolerations and node selector (it would preempt other teams' pods, or sit on GPU nodes), only its own `tolerations` and " +
			"`node_selector`; and it mounts read-only the data volume that holds `log_dir` (or `data_volume`), so that it never holds a claim " +
			"for writing. With a ReadWriteOnce claim it can only run on the node that has the claim attached: give it the placement of that node, " +
			"or use a ReadOnlyMany or ReadWriteMany claim. " +
			"Adding, changing or removing it changes only the TensorBoard: the job keeps running. A TensorBoard that cannot be made is a " +
			"warning, not a failed job: `tensorboard_url` is null, and the next plan shows the TensorBoard to be added again.",
		Attributes: map[string]schema.Attribute{
			"log_dir": schema.StringAttribute{Required: true, Validators: []validator.String{nonBlankRule},
				MarkdownDescription: "Directory TensorBoard reads, e.g. `/training_logs` on one of `data_volumes`."},
			"image": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(jobs.DefaultTensorBoardImage),
				Validators:          []validator.String{nonBlankRule},
				MarkdownDescription: "TensorBoard's image. Default `" + jobs.DefaultTensorBoardImage + "`."},
			"service_type": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(string(corev1.ServiceTypeClusterIP)),
				Validators: []validator.String{stringvalidator.OneOf(string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort))},
				MarkdownDescription: "`ClusterIP` (default: the TensorBoard answers inside the cluster, or through `kubectl port-forward`) or " +
					"`NodePort` (it answers on a port of every node, to anyone who can reach the nodes)."},
			"data_volume": schema.StringAttribute{Optional: true, Validators: []validator.String{dataVolumeRule},
				MarkdownDescription: "The claim it reads the logs from, as `PVC_NAME:/MOUNT/PATH`, mounted read-only (a ReadOnlyMany claim of the same " +
					"volume, for instance). Unset: the job's `data_volumes` whose mount path holds `log_dir` (all of them when none does)."},
			"node_selector": schema.MapAttribute{ElementType: types.StringType, Optional: true, Validators: []validator.Map{labelMapRule},
				MarkdownDescription: "Labels of the nodes it may run on. Unset: any node (not the job's selector)."},
			"tolerations": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators:          []validator.List{listvalidator.ValueStringsAre(tolerationRule)},
				MarkdownDescription: "Taints it tolerates, as strings, as the job's `tolerations`. Unset: none (not the job's)."},
		},
	}
}

func tensorBoardURLAttribute() schema.Attribute {
	return schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{tensorBoardURLPlan{}},
		MarkdownDescription: "Where the TensorBoard answers: with `service_type = \"NodePort\"`, like `arena get` prints it, `http://NODE_ADDRESS:NODE_PORT` " +
			"on a node that is Ready and schedulable (or, with none, the in-cluster address and a warning saying why); with `ClusterIP`, " +
			"`http://NAME-tensorboard.NAMESPACE.svc:6006`. Null without a `tensorboard`, or when the TensorBoard could not be made."}
}

// tensorBoardURLPlan keeps the URL while the TensorBoard stays as it is, and plans it unknown
// (or null, without one) when it is added, changed or removed.
type tensorBoardURLPlan struct{}

func (tensorBoardURLPlan) Description(context.Context) string {
	return "the state's URL while the tensorboard is unchanged"
}
func (p tensorBoardURLPlan) MarkdownDescription(ctx context.Context) string {
	return p.Description(ctx)
}

func (tensorBoardURLPlan) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return // create (unknown) or destroy
	}
	var planned, prior types.Object
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("tensorboard"), &planned)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("tensorboard"), &prior)...)
	switch {
	case planned.IsUnknown():
	case planned.IsNull():
		resp.PlanValue = types.StringNull()
	case planned.Equal(prior) && !req.StateValue.IsNull():
		resp.PlanValue = req.StateValue
	}
}

func tensorBoardTarget(namespace, job string) kube.Target {
	return kube.Target{GVR: jobs.DeploymentGVR, Kind: "Deployment", Namespace: namespace, Name: jobs.TensorBoardName(job),
		PodSelector: jobs.TensorBoardLabel + "=" + job, JobName: job}
}

func tensorBoardServiceTarget(namespace, job string) kube.Target {
	t := tensorBoardTarget(namespace, job)
	t.GVR, t.Kind = jobs.ServiceGVR, "Service"
	return t
}

// spec is the TensorBoard the attribute describes; its values passed their validators at plan.
func (m tensorBoardModel) spec() jobs.TensorBoardSpec {
	tb := jobs.TensorBoardSpec{LogDir: m.LogDir.ValueString(), Image: m.Image.ValueString(), ServiceType: corev1.ServiceType(m.ServiceType.ValueString())}
	if v, err := jobs.ParseDataVolume(m.DataVolume.ValueString()); err == nil && !m.DataVolume.IsNull() {
		tb.Volume = &v
	}
	ctx := context.Background()
	_ = m.NodeSelector.ElementsAs(ctx, &tb.NodeSelector, true)
	var ignored diag.Diagnostics // the validators refused bad ones at plan
	tb.Tolerations = tolerationsOf(ctx, m.Tolerations, path.Root("tensorboard").AtName("tolerations"), &ignored)
	return tb
}

// createTensorBoard creates the job's TensorBoard, if it has one, owned by the job object, and
// records its URL. A TensorBoard is a convenience beside the training: when it cannot be made,
// the apply warns and the URL is null (the next refresh finds no TensorBoard, so the next plan
// shows it to be added again); the job is never failed for it.
func (r *jobResource) createTensorBoard(ctx context.Context, f *tensorBoardFields, job *unstructured.Unstructured, pod jobs.PodOptions, diags *diag.Diagnostics) {
	f.TensorBoardURL = types.StringNull()
	if f.TensorBoard == nil {
		return
	}
	deployment, service, err := jobs.NewTensorBoard(job.GetName(), job.GetNamespace(), f.TensorBoard.spec(), pod, ownerReference(job))
	if err == nil {
		young := youngerThan(defaultTimeout)
		if _, err = r.client.Create(ctx, tensorBoardTarget(job.GetNamespace(), job.GetName()), deployment, young); err == nil {
			service, err = r.client.Create(ctx, tensorBoardServiceTarget(job.GetNamespace(), job.GetName()), service, young)
		}
	}
	if err != nil {
		tensorBoardWarning(diags, job, err)
		return
	}
	f.TensorBoardURL = types.StringValue(r.tensorBoardURL(ctx, service, diags))
}

func tensorBoardWarning(diags *diag.Diagnostics, job *unstructured.Unstructured, err error) {
	diags.AddWarning("TensorBoard not made",
		fmt.Sprintf("The TensorBoard of %s %s/%s could not be made: %s The job itself is fine and was not changed for it; "+
			"the next terraform apply tries the TensorBoard again.", job.GetKind(), job.GetNamespace(), job.GetName(),
			roleNeeded(strings.TrimSuffix(err.Error(), ".")+".", err, tensorBoardsRole, job.GetNamespace())))
}

// updateTensorBoard makes the TensorBoard what the plan says, from what the state says: added,
// removed (and waited for), or patched where the Deployment the plan builds differs from the
// state's. The job is not touched.
func (r *jobResource) updateTensorBoard(ctx context.Context, prior, planned *tensorBoardFields, job *unstructured.Unstructured,
	priorPods, plannedPods jobs.PodOptions, diags *diag.Diagnostics) {
	switch {
	case planned.TensorBoard == nil && prior.TensorBoard == nil:
		planned.TensorBoardURL = types.StringNull()
	case prior.TensorBoard == nil:
		r.createTensorBoard(ctx, planned, job, plannedPods, diags)
	case planned.TensorBoard == nil:
		planned.TensorBoardURL = types.StringNull()
		deployment := tensorBoardTarget(job.GetNamespace(), job.GetName())
		for _, t := range []kube.Target{tensorBoardServiceTarget(job.GetNamespace(), job.GetName()), deployment} {
			if _, err := r.client.DeleteIf(ctx, t, jobs.IsManaged); err != nil {
				diags.AddError("Error removing the TensorBoard of "+job.GetName(), err.Error())
				return
			}
		}
		r.waitDeleted(ctx, r.client, diags, deployment)
	default:
		before, beforeService, err := jobs.NewTensorBoard(job.GetName(), job.GetNamespace(), prior.TensorBoard.spec(), priorPods, ownerReference(job))
		if err != nil {
			tensorBoardWarning(diags, job, err)
			return
		}
		after, afterService, err := jobs.NewTensorBoard(job.GetName(), job.GetNamespace(), planned.TensorBoard.spec(), plannedPods, ownerReference(job))
		if err == nil {
			_, err = r.patchDifference(ctx, tensorBoardTarget(job.GetNamespace(), job.GetName()), before, after)
		}
		var service *unstructured.Unstructured
		if err == nil {
			service, err = r.patchDifference(ctx, tensorBoardServiceTarget(job.GetNamespace(), job.GetName()), beforeService, afterService)
		}
		if err != nil {
			tensorBoardWarning(diags, job, err)
			planned.TensorBoardURL = types.StringNull()
			return
		}
		planned.TensorBoardURL = prior.TensorBoardURL
		if service != nil || prior.TensorBoardURL.IsNull() {
			// The Service changed (its type): its URL did too.
			if service == nil {
				service, err = r.client.Get(ctx, tensorBoardServiceTarget(job.GetNamespace(), job.GetName()))
			}
			if err != nil || service == nil {
				tensorBoardWarning(diags, job, fmt.Errorf("its Service cannot be read: %v", err))
				planned.TensorBoardURL = types.StringNull()
				return
			}
			planned.TensorBoardURL = types.StringValue(r.tensorBoardURL(ctx, service, diags))
		}
	}
}

// readTensorBoard refreshes the TensorBoard from the cluster: its Deployment and Service when
// the state has one (or on import, where a TensorBoard of this provider's is found by its
// name). One that is gone, or is not this provider's, is left out of state, so the next plan
// shows it to be added again. owner is the job's model as just read: its data volumes tell
// whether the TensorBoard's claim is the default one.
func (r *jobResource) readTensorBoard(ctx context.Context, f *tensorBoardFields, job kube.Target, owner jobModel, imported bool, diags *diag.Diagnostics) {
	if f.TensorBoard == nil && !imported {
		f.TensorBoardURL = types.StringNull()
		return
	}
	f.TensorBoard = nil
	deployment, err := r.client.Read(ctx, tensorBoardTarget(job.Namespace, job.Name))
	if err != nil {
		diags.AddError("Error reading the TensorBoard of "+job.String(), err.Error())
		return
	}
	if deployment == nil || !jobs.IsManaged(deployment) {
		f.TensorBoardURL = types.StringNull()
		return
	}
	service, err := r.client.Read(ctx, tensorBoardServiceTarget(job.Namespace, job.Name))
	if err != nil {
		diags.AddError("Error reading the TensorBoard of "+job.String(), err.Error())
		return
	}
	var tb jobs.TensorBoardSpec
	var ok bool
	if service != nil && jobs.IsManaged(service) {
		var jobVolumes []jobs.DataVolume
		if spec, d := owner.spec(ctx); !d.HasError() {
			jobVolumes = spec.Pods().DataVolumes
		}
		tb, ok = jobs.ReadTensorBoard(deployment, service, jobVolumes)
	}
	if !ok {
		f.TensorBoardURL = types.StringNull()
		return
	}
	m := tensorBoardModel{LogDir: types.StringValue(tb.LogDir), Image: types.StringValue(tb.Image),
		ServiceType: types.StringValue(string(cmp.Or(tb.ServiceType, corev1.ServiceTypeClusterIP))), DataVolume: types.StringNull(),
		NodeSelector: optionalMap(ctx, tb.NodeSelector, diags), Tolerations: types.ListNull(types.StringType)}
	if tb.Volume != nil {
		m.DataVolume = types.StringValue(tb.Volume.String())
	}
	tolerations, rest := jobs.FormatTolerations(tb.Tolerations)
	if len(rest) > 0 {
		diags.AddWarning("TensorBoard toleration not shown", fmt.Sprintf("The TensorBoard of %s tolerates %v, which the toleration strings cannot say; "+
			"its tolerations are left out of state.", job, rest[0]))
		tolerations = nil
	}
	if len(tolerations) > 0 {
		m.Tolerations = stringListValue(tolerations)
	}
	f.TensorBoard = &m
	if f.TensorBoardURL.IsNull() || f.TensorBoardURL.IsUnknown() {
		f.TensorBoardURL = types.StringValue(r.tensorBoardURL(ctx, service, diags))
	}
}

// tensorBoardURL is where the TensorBoard's Service answers: for a NodePort, on a Ready,
// schedulable node (with a warning and the in-cluster address when there is none).
func (r *jobResource) tensorBoardURL(ctx context.Context, service *unstructured.Unstructured, diags *diag.Diagnostics) string {
	if t, _, _ := unstructured.NestedString(service.Object, "spec", "type"); t != string(corev1.ServiceTypeNodePort) {
		return jobs.TensorBoardURL(service, "")
	}
	nodes, err := r.client.Nodes(ctx, "")
	address, whyNone := "", ""
	if err != nil {
		whyNone = "the nodes cannot be listed: " + err.Error()
	} else {
		address, whyNone = jobs.NodeAddress(nodes)
	}
	if address == "" {
		diags.AddWarning("No node address for the TensorBoard",
			fmt.Sprintf("The TensorBoard's NodePort cannot be named on a node: %s. tensorboard_url is its address inside the cluster.", whyNone))
	}
	return jobs.TensorBoardURL(service, address)
}

// deletionTargets are what destroying a job waits for: the job and its pods, and its
// TensorBoard and that pod.
func deletionTargets(m jobModel, job kube.Target) []kube.Target {
	targets := []kube.Target{job}
	if f := tensorBoardOf(m); f != nil && f.TensorBoard != nil {
		targets = append(targets, tensorBoardTarget(job.Namespace, job.Name))
	}
	return targets
}
