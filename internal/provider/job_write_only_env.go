package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// Write-only variables (Terraform 1.11 and later): their values are in the configuration alone,
// never in a plan or the state. The apply writes them into a Secret the job owns, which its pods
// take whole (jobs.WriteOnlyEnv); the version, which the state keeps and the job object records,
// is what a plan compares.

// writeOnlyEnvModel is the write-only variables of a job.
type writeOnlyEnvModel struct {
	SensitiveEnvWO        types.Map   `tfsdk:"sensitive_env_wo"`
	SensitiveEnvWOVersion types.Int64 `tfsdk:"sensitive_env_wo_version"`
}

func (m *writeOnlyEnvModel) writeOnlyEnv() *writeOnlyEnvModel { return m }

type withWriteOnlyEnv interface{ writeOnlyEnv() *writeOnlyEnvModel }

// jobVersionDescription describes a job's sensitive_env_wo_version.
const jobVersionDescription = "Version of `sensitive_env_wo`, any number you choose: a new one writes the values into the job's Secret again " +
	"and changes the job in place, recording the version on the job object; the pods running then keep the values they " +
	"started with until they start again (a restart, a rescale, a replacement). Setting or removing it on a running job " +
	"replaces the job (its pods start or stop taking the Secret). An import reads it back from the job object; never the values."

// writeOnlyEnvAttributes are the write-only variables' attributes of a job.
func writeOnlyEnvAttributes(role string) map[string]schema.Attribute {
	return describedWriteOnlyEnv("Environment variables of "+role+" whose values are in neither the plan nor the state "+
		"(a write-only attribute: Terraform 1.11 and later). The apply writes them into the Secret `NAME-write-only-env`, which the job owns "+
		"and its pods take whole (`envFrom`); the provider never reads that Secret back. Since no plan can compare values nobody keeps, "+
		"they are written only when `sensitive_env_wo_version` changes: change it with the values. The provider's identity needs the "+
		"role `terraform-provider-training-write-only-env` in the job's namespace (see Permissions in the index). Not on OpenTofu "+
		"or Terraform before 1.11, which refuse it: use `sensitive_env` there.",
		jobVersionDescription)
}

// describedWriteOnlyEnv are the write-only variables' attributes, described so.
func describedWriteOnlyEnv(values, version string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"sensitive_env_wo": schema.MapAttribute{ElementType: types.StringType, Optional: true, WriteOnly: true,
			Validators: []validator.Map{mapvalidator.KeysAre(envNameRule), distinctKeys{"env", "sensitive_env", "env_secret"},
				mapvalidator.AlsoRequires(path.MatchRoot("sensitive_env_wo_version"))},
			MarkdownDescription: values},
		"sensitive_env_wo_version": schema.Int64Attribute{Optional: true,
			Validators:          []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("sensitive_env_wo"))},
			MarkdownDescription: version},
	}
}

// trainWriteOnlyEnvAttributes are a TrainJob's write-only variables' attributes: its trainer takes
// each by name from its key of the Secret (Trainer's API has no envFrom), so the names, never the
// values, are in the plan and the state, and new names replace the job.
func trainWriteOnlyEnvAttributes() map[string]schema.Attribute {
	attributes := describedWriteOnlyEnv("Environment variables of every node whose values are in neither the plan nor the state "+
		"(a write-only attribute: Terraform 1.11 and later). The apply writes them into the Secret `NAME-write-only-env`, which the job owns; "+
		"the trainer takes each variable from its key of that Secret (Trainer's API has no `envFrom`), so their names are in the plan "+
		"and the state (`sensitive_env_wo_names`), never their values, which the provider never reads back. The values are written only "+
		"when `sensitive_env_wo_version` changes: change it with them. New names replace the job, since Trainer's API fixes the "+
		"trainer's variables once the job is made. The provider's identity needs the role `terraform-provider-training-write-only-env` "+
		"in the job's namespace (see Permissions in the index). Not on OpenTofu or Terraform before 1.11, which refuse it: use "+
		"`sensitive_env` there.", jobVersionDescription)
	attributes["sensitive_env_wo_names"] = schema.ListAttribute{ElementType: types.StringType, Computed: true,
		PlanModifiers: []planmodifier.List{writeOnlyNames{}},
		MarkdownDescription: "The names of `sensitive_env_wo`'s variables, sorted, as the trainer takes them; null without any. " +
			"A change of them replaces the job."}
	return attributes
}

// runtimeWriteOnlyEnvAttributes are a TrainingRuntime's write-only variables' attributes: every pod
// of the jobs made from it takes the runtime's Secret whole.
func runtimeWriteOnlyEnvAttributes() map[string]schema.Attribute {
	return describedWriteOnlyEnv("Environment variables of every pod of the jobs made from a TrainingRuntime (one with `namespace`), whose "+
		"values are in neither the plan nor the state (a write-only attribute: Terraform 1.11 and later). The apply writes them into the "+
		"Secret `NAME-write-only-env` of the runtime's namespace, which the runtime owns and its pod templates take whole (`envFrom`); the "+
		"provider never reads it back. They are written only when `sensitive_env_wo_version` changes: change it with them. Refused on a "+
		"ClusterTrainingRuntime, whose jobs run in every namespace while a Secret is in one. The provider's identity needs the role "+
		"`terraform-provider-training-write-only-env` in the runtime's namespace. Not on OpenTofu or Terraform before 1.11: use "+
		"`sensitive_env` there.",
		"Version of `sensitive_env_wo`, any number you choose: a new one writes the values into the runtime's "+
			"Secret again and updates the runtime in place, recording the version on it; pods that start from then on take the new values "+
			"(running ones keep theirs). An import reads it back from the runtime; never the values.")
}

// writeOnlyNames plans sensitive_env_wo_names: the keys the configuration gives sensitive_env_wo.
type writeOnlyNames struct{}

func (writeOnlyNames) Description(context.Context) string {
	return "the names of sensitive_env_wo, as the configuration gives them"
}

func (m writeOnlyNames) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (writeOnlyNames) PlanModifyList(ctx context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	var values types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("sensitive_env_wo"), &values)...)
	switch {
	case resp.Diagnostics.HasError():
	case values.IsUnknown():
		resp.PlanValue = types.ListUnknown(types.StringType)
	case len(values.Elements()) == 0:
		resp.PlanValue = types.ListNull(types.StringType)
	default:
		resp.PlanValue = stringListValue(slices.Sorted(maps.Keys(values.Elements())))
	}
}

// addTo sets the job's write-only variables in o, when the model has a version of them.
func (m *writeOnlyEnvModel) addTo(job string, o *jobs.PodOptions) {
	if w := m.writeOnlyFor(job); w != nil {
		o.WriteOnlyEnv = w
	}
}

// writeOnlyFor is the write-only variables of the object named name (a job, a
// TrainingRuntime), as the model says them; nil for none.
func (m *writeOnlyEnvModel) writeOnlyFor(name string) *jobs.WriteOnlyEnv {
	if v := m.SensitiveEnvWOVersion; !v.IsNull() && !v.IsUnknown() {
		return &jobs.WriteOnlyEnv{Secret: jobs.WriteOnlyEnvSecret(name), Version: v.ValueInt64()}
	}
	return nil
}

// setFrom reads the version back; the values never are.
func (m *writeOnlyEnvModel) setFrom(o jobs.PodOptions) {
	m.SensitiveEnvWO = types.MapNull(types.StringType)
	m.SensitiveEnvWOVersion = types.Int64Null()
	if o.WriteOnlyEnv != nil {
		m.SensitiveEnvWOVersion = types.Int64Value(o.WriteOnlyEnv.Version)
	}
}

// writeOnlyOf is the job's write-only variables as the model says them; nil for none.
func writeOnlyOf(m jobModel) *jobs.WriteOnlyEnv {
	w, ok := m.(withWriteOnlyEnv)
	if !ok {
		return nil
	}
	return w.writeOnlyEnv().writeOnlyFor(m.job().Name.ValueString())
}

// secretWriter writes and deletes the Secret of an object's write-only variables (a job's, a
// TrainingRuntime's), named after the object t.
type secretWriter struct{ client *kube.Client }

func (r *jobResource) secrets() secretWriter { return secretWriter{r.client} }

// write writes the values the configuration gives into the Secret of the write-only variables
// (w) of t, handed to owner when there is one.
func (r secretWriter) write(ctx context.Context, config tfsdk.Config, t kube.Target, w *jobs.WriteOnlyEnv, owner *metav1.OwnerReference, diags *diag.Diagnostics) bool {
	var values map[string]string
	diags.Append(config.GetAttribute(ctx, path.Root("sensitive_env_wo"), &values)...)
	if diags.HasError() {
		return false
	}
	if err := r.client.WriteJobSecret(ctx, t.Namespace, t.Name, w.Version, values, owner); err != nil {
		diags.AddAttributeError(path.Root("sensitive_env_wo"), "Error writing the write-only variables of "+t.String(), err.Error()+secretRoleHint)
		return false
	}
	return true
}

// secretRoleHint says what a refused write of the Secret may need.
const secretRoleHint = " Writing them needs the role terraform-provider-training-write-only-env (create, patch and delete on Secrets) in its namespace."

// jobOwner is the owner reference of the job t with that UID.
func (r *jobResource) jobOwner(t kube.Target, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: r.kind.GVR.GroupVersion().String(), Kind: r.kind.Object, Name: t.Name, UID: k8stypes.UID(uid),
		BlockOwnerDeletion: ptr.To(true)}
}

// update writes the Secret of the write-only variables of t, owned by owner, before an update that
// asks for a version of them the state does not have (so that pods made from then on find it).
func (r secretWriter) update(ctx context.Context, config tfsdk.Config, t kube.Target, owner metav1.OwnerReference, was, will *jobs.WriteOnlyEnv, diags *diag.Diagnostics) bool {
	if will == nil || was != nil && was.Version == will.Version {
		return true
	}
	return r.write(ctx, config, t, will, &owner, diags)
}

// delete deletes the Secret of the write-only variables of t, when it had some.
func (r secretWriter) delete(ctx context.Context, t kube.Target, had *jobs.WriteOnlyEnv, diags *diag.Diagnostics) {
	if had == nil {
		return
	}
	if err := r.client.DeleteJobSecret(ctx, t.Namespace, t.Name); err != nil {
		diags.AddWarning("The Secret of the write-only variables of "+t.String()+" was not deleted",
			fmt.Sprintf("%v.%s %s owns it: Kubernetes' garbage collector deletes it once %[3]s is gone.", err, secretRoleHint, t))
	}
}

// warnNewWriteOnlyVersion says what a new version of the write-only variables does to a job that
// keeps running: its pods keep the values they started with.
func warnNewWriteOnlyVersion(resp *resource.ModifyPlanResponse, p planned) {
	if p.replacing() || p.prior == nil || p.next == nil {
		return
	}
	was, will := writeOnlyOf(p.prior), writeOnlyOf(p.next)
	if will == nil || was == nil || was.Version == will.Version {
		return
	}
	switch p.prior.job().Status.ValueString() {
	case jobs.Succeeded, jobs.Failed:
		return
	}
	resp.Diagnostics.AddAttributeWarning(path.Root("sensitive_env_wo_version"), "Running pods keep their write-only variables",
		fmt.Sprintf("The apply writes the new values into Secret %s; the pods of %s/%s running then keep the values they started with until "+
			"they start again (a restart, a rescale, a replacement).", will.Secret, p.prior.job().Namespace.ValueString(), p.prior.job().Name.ValueString()))
}
