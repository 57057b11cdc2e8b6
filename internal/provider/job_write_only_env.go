package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
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

// writeOnlyEnvModel is the write-only variables of the kinds whose pods can take a Secret whole
// (every kind but the TrainJob).
type writeOnlyEnvModel struct {
	SensitiveEnvWO        types.Map   `tfsdk:"sensitive_env_wo"`
	SensitiveEnvWOVersion types.Int64 `tfsdk:"sensitive_env_wo_version"`
}

func (m *writeOnlyEnvModel) writeOnlyEnv() *writeOnlyEnvModel { return m }

type withWriteOnlyEnv interface{ writeOnlyEnv() *writeOnlyEnvModel }

// writeOnlyEnvAttributes are the write-only variables' attributes.
func writeOnlyEnvAttributes(role string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"sensitive_env_wo": schema.MapAttribute{ElementType: types.StringType, Optional: true, WriteOnly: true,
			Validators: []validator.Map{mapvalidator.KeysAre(envNameRule), distinctKeys{"env", "sensitive_env", "env_secret"},
				mapvalidator.AlsoRequires(path.MatchRoot("sensitive_env_wo_version"))},
			MarkdownDescription: "Environment variables of " + role + " whose values are in neither the plan nor the state " +
				"(a write-only attribute: Terraform 1.11 and later). The apply writes them into the Secret `NAME-write-only-env`, which the job owns " +
				"and its pods take whole (`envFrom`); the provider never reads that Secret back. Since no plan can compare values nobody keeps, " +
				"they are written only when `sensitive_env_wo_version` changes: change it with the values. The provider's identity needs the " +
				"role `terraform-provider-training-write-only-env` in the job's namespace (see Permissions in the index). Not on OpenTofu " +
				"or Terraform before 1.11, which refuse it: use `sensitive_env` there."},
		"sensitive_env_wo_version": schema.Int64Attribute{Optional: true,
			Validators: []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("sensitive_env_wo"))},
			MarkdownDescription: "Version of `sensitive_env_wo`, any number you choose: a new one writes the values into the job's Secret again " +
				"and changes the job in place, recording the version on the job object; the pods running then keep the values they " +
				"started with until they start again (a restart, a rescale, a replacement). Setting or removing it on a running job " +
				"replaces the job (its pods start or stop taking the Secret). An import reads it back from the job object; never the values."},
	}
}

// addTo sets the job's write-only variables in o, when the model has a version of them.
func (m *writeOnlyEnvModel) addTo(job string, o *jobs.PodOptions) {
	if v := m.SensitiveEnvWOVersion; !v.IsNull() && !v.IsUnknown() {
		o.WriteOnlyEnv = &jobs.WriteOnlyEnv{Secret: jobs.WriteOnlyEnvSecret(job), Version: v.ValueInt64()}
	}
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
	var o jobs.PodOptions
	w.writeOnlyEnv().addTo(m.job().Name.ValueString(), &o)
	return o.WriteOnlyEnv
}

// writeJobSecret writes the values the configuration gives into the Secret of the job's write-only
// variables (w), handed to owner when there is one.
func (r *jobResource) writeJobSecret(ctx context.Context, config tfsdk.Config, t kube.Target, w *jobs.WriteOnlyEnv, owner *metav1.OwnerReference, diags *diag.Diagnostics) bool {
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
const secretRoleHint = " Writing them needs the role terraform-provider-training-write-only-env (create, patch and delete on Secrets) in the job's namespace."

// jobOwner is the owner reference of the job t with that UID.
func (r *jobResource) jobOwner(t kube.Target, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: r.kind.GVR.GroupVersion().String(), Kind: r.kind.Object, Name: t.Name, UID: k8stypes.UID(uid),
		BlockOwnerDeletion: ptr.To(true)}
}

// updateJobSecret writes the Secret of the job's write-only variables before an update that asks
// for a version of them the state does not have (so that pods made from then on find it).
func (r *jobResource) updateJobSecret(ctx context.Context, config tfsdk.Config, t kube.Target, uid string, was, will *jobs.WriteOnlyEnv, diags *diag.Diagnostics) bool {
	if will == nil || was != nil && was.Version == will.Version {
		return true
	}
	owner := r.jobOwner(t, uid)
	return r.writeJobSecret(ctx, config, t, will, &owner, diags)
}

// deleteJobSecret deletes the Secret of the job's write-only variables, when it had some.
func (r *jobResource) deleteJobSecret(ctx context.Context, t kube.Target, had *jobs.WriteOnlyEnv, diags *diag.Diagnostics) {
	if had == nil {
		return
	}
	if err := r.client.DeleteJobSecret(ctx, t.Namespace, t.Name); err != nil {
		diags.AddWarning("The Secret of the write-only variables of "+t.String()+" was not deleted",
			fmt.Sprintf("%v.%s The job owns it: Kubernetes' garbage collector deletes it once the job is gone.", err, secretRoleHint))
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
