package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

var podPatchRule = stringRule{"pod patch", func(s string) error {
	_, err := jobs.ParsePodPatch(s)
	return err
}}

// podPatchAttribute is pod_patch.
func podPatchAttribute() schema.Attribute {
	return schema.MapAttribute{ElementType: types.StringType, Optional: true,
		PlanModifiers: []planmodifier.Map{samePodPatches{}},
		Validators:    []validator.Map{mapvalidator.ValueStringsAre(podPatchRule)},
		MarkdownDescription: "Strategic merge patches of the pods' templates, by role (the job's role names: `launcher` and `worker` " +
			"of an MPI job, `master` and `worker` of a PyTorch job, `chief`, `ps` and `worker` of a TF job, `etcd` and `worker` of an " +
			"elastic job), in YAML or JSON (`yamlencode({...})`): what the attributes do not say (affinity and topology spread, " +
			"init containers and native sidecars with `restartPolicy: Always`, volumes of any kind and their mounts, host IPC, " +
			"a scheduler, a grace period). Each is applied after every attribute, as `kubectl patch --type=strategic` would: lists " +
			"keyed by name merge by name, so `containers: [{name: worker, volumeMounts: [...]}]` adds mounts to the worker's own " +
			"container. A patch changes the pods' spec; their labels and annotations are the `labels` and `annotations` attributes' (a " +
			"patch of the metadata is a plan error). A patch is read as the core pod types at plan time: an unknown field or a wrong " +
			"type is a plan error naming its path. One that would change what the operator or this provider relies on is refused: the first container (the one " +
			"the operator looks for) and its image, command and the variables this provider sets, and the pod's `restartPolicy`. " +
			"Refresh reads the patch back: a change made by hand to a pod template shows as a change of this attribute, and an " +
			"import gives what a job made elsewhere holds beyond the attributes as the patch that makes it. Changing it replaces the job."}
}

// samePodPatches keeps the state's patch where the configuration's means the same (the same
// JSON once parsed), so that a patch written as YAML and read back as JSON is no change.
type samePodPatches struct{}

func (samePodPatches) Description(context.Context) string {
	return "a patch that means the same as the state's is no change"
}
func (d samePodPatches) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (samePodPatches) ModifierNoOpOnUnchangedPlan() {}

func (samePodPatches) PlanModifyMap(ctx context.Context, req planmodifier.MapRequest, resp *planmodifier.MapResponse) {
	if req.StateValue.IsNull() || req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var state, config map[string]string
	if req.StateValue.ElementsAs(ctx, &state, false).HasError() || req.ConfigValue.ElementsAs(ctx, &config, false).HasError() {
		return
	}
	if len(state) != len(config) {
		return
	}
	for role, c := range config {
		if !samePatch(c, state[role]) {
			return
		}
	}
	resp.PlanValue = req.StateValue
}

func samePatch(a, b string) bool {
	pa, errA := jobs.ParsePodPatch(a)
	pb, errB := jobs.ParsePodPatch(b)
	if errA != nil || errB != nil {
		return false
	}
	var va, vb any
	if json.Unmarshal(pa, &va) != nil || json.Unmarshal(pb, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
