package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// List resources (Terraform 1.14+): `terraform query` finds the jobs and taints that exist,
// made by Arena, kubectl or scripts as much as by Terraform, and `-generate-config-out` writes
// the HCL and `import` blocks that bring them under Terraform, in the provider's own words (the
// same read as import: toleration strings, `gpus`, `worker_count`). One list request per kind
// and namespace (or nodes) whatever the number of objects.

// jobListResource lists the jobs of one kind.
type jobListResource struct {
	jobResource
}

// listResources are a list resource for each job resource, on its kind and model, and the
// taints'.
func listResources() []func() list.ListResource {
	var out []func() list.ListResource
	for _, newResource := range jobResources {
		r, ok := newResource().(interface{ base() *jobResource })
		if !ok {
			panic(fmt.Sprintf("%T is in jobResources but is not a job resource", newResource()))
		}
		job := r.base()
		out = append(out, func() list.ListResource {
			return &jobListResource{jobResource: jobResource{kind: job.kind, newModel: job.newModel}}
		})
	}
	return append(out, func() list.ListResource { return &taintListResource{} })
}

type jobListConfig struct {
	Namespace     types.String `tfsdk:"namespace"`
	LabelSelector types.String `tfsdk:"label_selector"`
	Status        types.String `tfsdk:"status"`
}

func (r *jobListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The " + r.kind.Object + "s of a namespace, whoever made them (Arena, kubectl, Terraform), for `terraform query`: " +
			"with `-generate-config-out` it writes a `" + "training_" + r.kind.Name + "_job` block and an `import` block for each, " +
			"which an apply imports without changing the jobs.",
		Attributes: map[string]listschema.Attribute{
			"namespace": listschema.StringAttribute{Optional: true, Validators: []validator.String{namespaceRule},
				MarkdownDescription: "Namespace to list. Default `default`."},
			"label_selector": listschema.StringAttribute{Optional: true,
				MarkdownDescription: "Only jobs whose labels match this selector, e.g. `release=vision` (Arena labels its jobs `release=NAME`)."},
			"status": listschema.StringAttribute{Optional: true,
				Validators:          []validator.String{stringvalidator.OneOf(jobs.Phases...)},
				MarkdownDescription: "Only jobs in this state, as their `status` reads it: one of " + codeList(jobs.Phases) + "."},
		},
	}
}

func (r *jobListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *jobListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var cfg jobListConfig
	if diags := req.Config.Get(ctx, &cfg); diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	namespace := cfg.Namespace.ValueString()
	if namespace == "" {
		namespace = "default"
	}
	// Each job is held as JSON and decoded as it is pushed: the jobs of a kind decoded at once
	// were most of a query's memory.
	listed, err := r.client.ListJSON(ctx, r.kind.GVR, namespace, cfg.LabelSelector.ValueString())
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Error listing "+r.kind.Object+"s", err.Error())
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	now := time.Now()
	stream.Results = func(push func(list.ListResult) bool) {
		var pushed int64
		for _, name := range slices.Sorted(maps.Keys(listed)) {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(listed[name]); err != nil {
				var diags diag.Diagnostics
				diags.AddError("Error reading the listed "+r.kind.Object+" "+name, err.Error())
				push(list.ListResult{Diagnostics: diags})
				return
			}
			delete(listed, name) // held no longer than it takes to push it
			status, err := r.kind.Status(jobs.Observed{Object: obj}, now)
			if err != nil || cfg.Status.ValueString() != "" && status.Phase != cfg.Status.ValueString() {
				continue
			}
			if req.Limit > 0 && pushed >= req.Limit {
				return
			}
			result := req.NewListResult(ctx)
			result.DisplayName = obj.GetNamespace() + "/" + obj.GetName() + " (" + status.Phase + ")"
			setIdentity(ctx, result.Identity, map[string]string{"namespace": obj.GetNamespace(), "name": obj.GetName()}, &result.Diagnostics)
			if req.IncludeResource {
				r.listed(ctx, req, result.Resource, obj.GetNamespace(), obj.GetName(), func(m jobModel) diag.Diagnostics {
					f := m.job()
					f.UID = types.StringValue(string(obj.GetUID()))
					live := jobs.WithoutAdmission(obj, nil)
					diags := m.read(ctx, live)
					if !diags.HasError() {
						readRolesAndPatches(ctx, r.kind, m, live, &diags)
					}
					status.Accelerators = accelerators(ctx, m)
					diags.Append(f.set(status)...)
					if !diags.HasError() {
						warnUnexpressed(ctx, r.kind, m, obj, &diags)
					}
					return diags
				}, &result.Diagnostics)
			}
			if result.Diagnostics.HasError() {
				// A job this resource cannot say (a Framework without an etcd and a worker task
				// role, workers that run their image's entrypoint): listed as a warning, never as
				// an import that would rewrite it.
				var warning diag.Diagnostics
				warning.AddWarning(fmt.Sprintf("%s %s/%s is not listed: %s cannot express it", r.kind.Object, obj.GetNamespace(), obj.GetName(), "training_"+r.kind.Name+"_job"),
					diagSummary(result.Diagnostics))
				if !push(list.ListResult{Diagnostics: warning}) {
					return
				}
				continue
			}
			pushed++
			if !push(result) {
				return
			}
		}
	}
}

// listed fills a listed job's resource as import and the first refresh would: the attributes
// import sets, then the job read back in the provider's words. (A TensorBoard and an elastic
// job's dependents, which take requests of their own, are read by the refresh after import.)
func (r *jobListResource) listed(ctx context.Context, req list.ListRequest, into *tfsdk.Resource, namespace, name string,
	read func(jobModel) diag.Diagnostics, diags *diag.Diagnostics) {
	state := tfsdk.State{Schema: req.ResourceSchema, Raw: tftypes.NewValue(req.ResourceSchema.Type().TerraformType(ctx), nil)}
	setImported(ctx, &state, namespace, name, diags)
	m := r.newModel()
	diags.Append(getModel(ctx, state, m)...)
	if diags.HasError() {
		return
	}
	m.pod().markImported()
	diags.Append(read(m)...)
	if diags.Append(setModel(ctx, &state, m)...); !diags.HasError() {
		into.Raw = state.Raw
	}
}

// taintListResource lists node taints.
type taintListResource struct {
	client *kube.Client
}

type taintListConfig struct {
	LabelSelector types.String `tfsdk:"label_selector"`
	Key           types.String `tfsdk:"key"`
}

func (r *taintListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_taint"
}

func (r *taintListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *taintListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The taints of the cluster's nodes (as `kubectl taint` or a node pool set them), for `terraform query`.",
		Attributes: map[string]listschema.Attribute{
			"label_selector": listschema.StringAttribute{Optional: true, MarkdownDescription: "Only nodes whose labels match this selector."},
			"key":            listschema.StringAttribute{Optional: true, MarkdownDescription: "Only taints of this key, e.g. `nvidia.com/gpu`."},
		},
	}
}

func (r *taintListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var cfg taintListConfig
	if diags := req.Config.Get(ctx, &cfg); diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	nodes, err := r.client.Nodes(ctx, cfg.LabelSelector.ValueString())
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Error listing nodes", err.Error())
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		var pushed int64
		for _, n := range nodes {
			for _, t := range n.Spec.Taints {
				if cfg.Key.ValueString() != "" && t.Key != cfg.Key.ValueString() || kubernetesTaint(t) {
					continue
				}
				if req.Limit > 0 && pushed >= req.Limit {
					return
				}
				m := nodeTaintModel{ID: types.StringValue(n.Name + "/" + t.Key + ":" + string(t.Effect)), Node: types.StringValue(n.Name),
					Key: types.StringValue(t.Key), Value: optionalString(t.Value), Effect: types.StringValue(string(t.Effect)), Added: types.BoolValue(false)}
				result := req.NewListResult(ctx)
				result.DisplayName = fmt.Sprintf("%s %s", n.Name, t.ToString())
				setIdentity(ctx, result.Identity, m.identity(), &result.Diagnostics)
				if req.IncludeResource {
					result.Diagnostics.Append(result.Resource.Set(ctx, m)...)
				}
				pushed++
				if !push(result) {
					return
				}
			}
		}
	}
}

// kubernetesTaint says whether Kubernetes itself manages the taint (node.kubernetes.io/...,
// node-role.kubernetes.io/control-plane): its keys are in Kubernetes' own domains, and it is not
// one a platform team would bring under Terraform.
func kubernetesTaint(t corev1.Taint) bool {
	domain, _, ok := strings.Cut(t.Key, "/")
	for _, d := range []string{"kubernetes.io", "k8s.io"} {
		if ok && (domain == d || strings.HasSuffix(domain, "."+d)) {
			return true
		}
	}
	return false
}

// diagSummary joins the errors' summaries and details into one text.
func diagSummary(diags diag.Diagnostics) string {
	var parts []string
	for _, d := range diags.Errors() {
		parts = append(parts, d.Summary()+": "+d.Detail())
	}
	return strings.Join(parts, "; ")
}
