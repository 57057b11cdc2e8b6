package provider

import (
	"context"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// setFromPodOptions sets the shared attributes from what the cluster holds. The model holds the
// prior state (null on import): where the cluster says the same as the state in other words (a
// quantity written `16384Mi` for `16Gi`, a toleration string written as a block), the state's words are kept, so that only a real difference shows in a
// plan. Labels and annotations are the user's only: on refresh, those of the keys the state
// has (anyone may add their own, as controllers and tools do); on import, all but the keys
// tools and controllers write (jobs.SystemKey).
func (m *podModel) setFromPodOptions(ctx context.Context, o jobs.PodOptions) diag.Diagnostics {
	var diags diag.Diagnostics
	imported := m.imported()
	prior, priorDiags := m.podOptions(ctx)
	var priorSensitive map[string]string
	priorDiags.Append(m.SensitiveEnv.ElementsAs(ctx, &priorSensitive, true)...)
	if imported || priorDiags.HasError() {
		prior, priorSensitive = jobs.PodOptions{}, nil
	}
	m.Image = types.StringValue(o.Image)
	if !imported && prior.GPUResource != "" {
		// The state names the GPUs' resource, which a read of the object alone only guesses.
		o.ExtendedResources = maps.Clone(o.ExtendedResources)
		o.TakeGPUs(prior.GPUResource)
	}
	m.ExtendedResources = optionalMap(ctx, o.ExtendedResources, &diags)
	m.GPUs = types.Int64Value(o.GPUs)
	m.GPUResourceName = types.StringValue(o.GPUResource)
	if o.GPUResource == "" {
		m.GPUResourceName = types.StringValue(jobs.DefaultGPUResource)
	}
	m.CPU = sameQuantity(m.CPU, o.CPU)
	m.Memory = sameQuantity(m.Memory, o.Memory)
	m.ShmSize = sameQuantity(m.ShmSize, o.ShmSize)
	m.ServiceAccountName = optionalString(o.ServiceAccountName)
	// A variable the state has keeps the form it has there (the values are the same either
	// way); one it has not (an import's, or one added elsewhere) takes the object's word, which
	// for a job made elsewhere is that every inline variable is sensitive (jobs.readSensitiveEnv).
	plain, sensitive := map[string]string{}, map[string]string{}
	for k, v := range o.Env {
		_, wasSensitive := priorSensitive[k]
		if _, known := prior.Env[k]; !known {
			wasSensitive = slices.Contains(o.SensitiveEnv, k)
		}
		if wasSensitive {
			sensitive[k] = v
		} else {
			plain[k] = v
		}
	}
	m.Env = optionalMap(ctx, plain, &diags)
	m.SensitiveEnv = optionalMap(ctx, sensitive, &diags)
	m.EnvSecret = types.MapNull(secretKeyType)
	if len(o.SecretEnv) > 0 {
		refs := map[string]attr.Value{}
		for name, ref := range o.SecretEnv {
			refs[name] = types.ObjectValueMust(secretKeyType.AttrTypes, map[string]attr.Value{
				"secret": types.StringValue(ref.Secret), "key": types.StringValue(ref.Key)})
		}
		m.EnvSecret = types.MapValueMust(secretKeyType, refs)
	}
	m.Labels = optionalMap(ctx, usersKeys(o.Labels, prior.Labels, imported), &diags)
	m.Annotations = optionalMap(ctx, usersKeys(o.Annotations, prior.Annotations, imported), &diags)
	m.NodeSelector = optionalMap(ctx, o.NodeSelector, &diags)
	m.ImagePullSecrets = optionalList(ctx, o.ImagePullSecrets, &diags)

	if imported || !equality.Semantic.DeepEqual(normalTolerations(prior.Tolerations), normalTolerations(o.Tolerations)) {
		// What the grammar cannot say (an effect without a key) is the pod patches' (readRolesAndPatches).
		tolerations, _ := jobs.FormatTolerations(o.Tolerations)
		m.Tolerations = optionalList(ctx, tolerations, &diags)
	}
	var volumes []string
	for _, v := range o.DataVolumes {
		volumes = append(volumes, v.String())
	}
	m.DataVolumes = optionalList(ctx, volumes, &diags)
	m.SecurityContext = securityValue(ctx, o.Security, &diags)
	m.CPULimit = types.BoolValue(!o.NoCPULimit)
	m.GracePeriod = types.Int64PointerValue(o.TerminationGracePeriod)
	m.Checkpoint = checkpointValue(o.Checkpoint)
	return diags
}

// sameQuantity is the quantity the cluster holds, in the state's words when they mean the same.
func sameQuantity(prior types.String, read string) types.String {
	if read == "" {
		return types.StringNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		p, errP := resource.ParseQuantity(prior.ValueString())
		r, errR := resource.ParseQuantity(read)
		if errP == nil && errR == nil && p.Cmp(r) == 0 {
			return prior
		}
	}
	return types.StringValue(read)
}

// usersKeys are the labels or annotations that are the user's: on import, every key but those
// tools and controllers write; on refresh, those of the keys the state has.
func usersKeys(read, prior map[string]string, imported bool) map[string]string {
	out := map[string]string{}
	for k, v := range read {
		if _, inState := prior[k]; (imported && !jobs.SystemKey(k)) || (!imported && inState) {
			out[k] = v
		}
	}
	return out
}
