package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

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
	deployment, service, err := jobs.NewTensorBoard(job.GetName(), job.GetNamespace(), tb, pod, ownerReference(job))
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
