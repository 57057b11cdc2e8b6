package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// securityModel is security_context.
type securityModel struct {
	RunAsNonRoot             types.Bool   `tfsdk:"run_as_non_root"`
	RunAsUser                types.Int64  `tfsdk:"run_as_user"`
	RunAsGroup               types.Int64  `tfsdk:"run_as_group"`
	FSGroup                  types.Int64  `tfsdk:"fs_group"`
	SeccompProfile           types.String `tfsdk:"seccomp_profile"`
	AllowPrivilegeEscalation types.Bool   `tfsdk:"allow_privilege_escalation"`
	ReadOnlyRootFilesystem   types.Bool   `tfsdk:"read_only_root_filesystem"`
	DropCapabilities         types.List   `tfsdk:"drop_capabilities"`
	AddCapabilities          types.List   `tfsdk:"add_capabilities"`
}

var securityType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"run_as_non_root": types.BoolType, "run_as_user": types.Int64Type, "run_as_group": types.Int64Type, "fs_group": types.Int64Type,
	"seccomp_profile": types.StringType, "allow_privilege_escalation": types.BoolType, "read_only_root_filesystem": types.BoolType,
	"drop_capabilities": types.ListType{ElemType: types.StringType}, "add_capabilities": types.ListType{ElemType: types.StringType},
}}

// securityAttribute is security_context, for the pods of role.
func securityAttribute(role string) schema.Attribute {
	return schema.SingleNestedAttribute{Optional: true,
		Validators: []validator.Object{securityRule{}},
		MarkdownDescription: "Security context of " + role + ": the user, group and seccomp profile are set on each pod " +
			"(`spec.securityContext`), so they cover the containers an operator adds too; privilege escalation, capabilities and a " +
			"read-only root filesystem, which Kubernetes sets per container only, on each container this provider writes " +
			"(`containers[].securityContext`). A namespace labelled `pod-security.kubernetes.io/enforce=restricted` admits pods with " +
			"`run_as_non_root = true`, `seccomp_profile = \"RuntimeDefault\"`, `allow_privilege_escalation = false` and " +
			"`drop_capabilities = [\"ALL\"]`; the plan of a job that makes pods checks them against the namespace's enforced Pod Security " +
			"level, as the API server will, and warns of what each role lacks (the server's admission configuration may exempt them). " +
			"Changing it replaces the job.",
		Attributes: map[string]schema.Attribute{
			"run_as_non_root": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "The kubelet refuses to start a container whose user is root (`runAsNonRoot`)."},
			"run_as_user": schema.Int64Attribute{Optional: true,
				MarkdownDescription: "User ID the containers' processes run as (`runAsUser`); unset is the image's user."},
			"run_as_group": schema.Int64Attribute{Optional: true,
				MarkdownDescription: "Primary group ID of the containers' processes (`runAsGroup`)."},
			"fs_group": schema.Int64Attribute{Optional: true,
				MarkdownDescription: "Group that owns the pods' volumes, and a supplementary group of every process (`fsGroup`): a non-root " +
					"user reads mounted Secrets and writes volumes through it."},
			"seccomp_profile": schema.StringAttribute{Optional: true,
				MarkdownDescription: "Seccomp profile (`seccompProfile`): `RuntimeDefault`, `Unconfined`, or `localhost/PATH` for a profile " +
					"file on the node, relative to the kubelet's seccomp folder."},
			"allow_privilege_escalation": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "Whether a process may gain more privileges than its parent (`allowPrivilegeEscalation`); " +
					"`false` for Pod Security restricted."},
			"read_only_root_filesystem": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "Mount the containers' root filesystem read-only (`readOnlyRootFilesystem`)."},
			"drop_capabilities": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				MarkdownDescription: "Linux capabilities to drop, as Kubernetes names them (`ALL`, `NET_RAW`; `capabilities.drop`)."},
			"add_capabilities": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				MarkdownDescription: "Linux capabilities to add (`IPC_LOCK` for RDMA memory registration; `capabilities.add`). Pod " +
					"Security restricted allows only `NET_BIND_SERVICE`."},
		},
	}
}

// security converts security_context; nil when it is null.
func security(ctx context.Context, o types.Object, diags *diag.Diagnostics) *jobs.Security {
	if o.IsNull() || o.IsUnknown() {
		return nil
	}
	var m securityModel
	if diags.Append(o.As(ctx, &m, basetypes.ObjectAsOptions{})...); diags.HasError() {
		return nil
	}
	s := &jobs.Security{
		RunAsNonRoot: m.RunAsNonRoot.ValueBoolPointer(), RunAsUser: m.RunAsUser.ValueInt64Pointer(), RunAsGroup: m.RunAsGroup.ValueInt64Pointer(),
		FSGroup: m.FSGroup.ValueInt64Pointer(), SeccompProfile: m.SeccompProfile.ValueString(),
		AllowPrivilegeEscalation: m.AllowPrivilegeEscalation.ValueBoolPointer(), ReadOnlyRootFilesystem: m.ReadOnlyRootFilesystem.ValueBoolPointer(),
	}
	diags.Append(m.DropCapabilities.ElementsAs(ctx, &s.DropCapabilities, true)...)
	diags.Append(m.AddCapabilities.ElementsAs(ctx, &s.AddCapabilities, true)...)
	return s
}

// securityValue is security_context for what the cluster holds.
func securityValue(ctx context.Context, s *jobs.Security, diags *diag.Diagnostics) types.Object {
	if s == nil {
		return types.ObjectNull(securityType.AttrTypes)
	}
	seccomp := types.StringNull()
	if s.SeccompProfile != "" {
		seccomp = types.StringValue(s.SeccompProfile)
	}
	v, d := types.ObjectValueFrom(ctx, securityType.AttrTypes, securityModel{
		RunAsNonRoot: types.BoolPointerValue(s.RunAsNonRoot), RunAsUser: types.Int64PointerValue(s.RunAsUser),
		RunAsGroup: types.Int64PointerValue(s.RunAsGroup), FSGroup: types.Int64PointerValue(s.FSGroup), SeccompProfile: seccomp,
		AllowPrivilegeEscalation: types.BoolPointerValue(s.AllowPrivilegeEscalation), ReadOnlyRootFilesystem: types.BoolPointerValue(s.ReadOnlyRootFilesystem),
		DropCapabilities: optionalList(ctx, s.DropCapabilities, diags), AddCapabilities: optionalList(ctx, s.AddCapabilities, diags),
	})
	diags.Append(d...)
	return v
}

// securityRule refuses at plan time what jobs.Security.Validate refuses when the job is built.
type securityRule struct{}

func (securityRule) Description(context.Context) string {
	return "IDs of 0 or more, no run_as_non_root as user 0, a known seccomp profile, capabilities named as Kubernetes names them"
}
func (r securityRule) MarkdownDescription(ctx context.Context) string { return r.Description(ctx) }

func (securityRule) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for _, v := range req.ConfigValue.Attributes() {
		if v.IsUnknown() {
			return
		}
	}
	var diags diag.Diagnostics
	s := security(ctx, req.ConfigValue, &diags)
	if diags.HasError() || s == nil {
		return
	}
	if err := s.Validate(); err != nil {
		// Terraform points at the whole object when it is written as one expression.
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid security context", "security_context: "+err.Error())
	}
}
