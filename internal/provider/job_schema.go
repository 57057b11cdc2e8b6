package provider

import (
	"cmp"
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// jobSchemaSpec is what differs between the job resources' schemas.
type jobSchemaSpec struct {
	description string
	// roles names the pods the shared pod attributes apply to, for their descriptions;
	// tolerated, those the tolerations apply to, when they differ (companions).
	roles, tolerated string
	// running says what `wait_for = "running"` waits for.
	running string
	// metadata says what the labels and annotations go to and what changing them does; by
	// default jobMetadata(roles).
	metadata metadataDoc
	// own are the kind's attributes (name and worker_count among them) and blocks.
	own    map[string]schema.Attribute
	blocks map[string]schema.Block
}

// jobSchema is a job resource's schema: the kind's own attributes and blocks, and those every
// job resource has (identity, pod attributes, tolerations, TensorBoard, status, timeouts).
func jobSchema(ctx context.Context, s jobSchemaSpec) schema.Schema {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	shared := map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "`namespace/name` of the job."},
		"uid": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "UID of the job object. A job of the same name that is not this object (deleted and made again outside " +
				"Terraform) is not taken for this resource: refresh drops the resource with a warning, and destroy never deletes it."},
		"namespace": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("default"),
			PlanModifiers: replaceString, Validators: []validator.String{namespaceRule},
			MarkdownDescription: "Namespace of the job. Default `default`."},
		"wait_for": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(waitRunning),
			Validators: []validator.String{stringvalidator.OneOf(waitCreated, waitAdmitted, waitRunning)},
			MarkdownDescription: "What create and update wait for: `created` (the job is accepted), `admitted` (Kueue admitted a job " +
				"with `queue_name`: it holds its quota and starts) or `running` (" + s.running + "). Default `running`. A job that fails, " +
				"or that its operator rejects, ends the wait at once with the reason. A wait that runs out on a job that is only queued or " +
				"not running yet leaves it in state, untainted, with a warning saying why."},
		"tensorboard_url": tensorBoardURLAttribute(),
		"recreate_if_missing": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "What a refresh does when the job is gone from the cluster after it was created or imported (deleted by " +
				"its TTL, its operator's retention, Kueue or a person). With false (the default) the resource stays in state with a warning, " +
				"whatever status it was last seen with: a job last seen PENDING, QUEUED or SUSPENDED may have been admitted and run to its end " +
				"since, and Terraform never runs a training again by itself; `terraform apply -replace=ADDRESS` runs it again. With true the " +
				"resource is dropped from state and the next apply creates the job again. Changing it changes nothing in the cluster."},
	}
	blocks := map[string]schema.Block{
		"toleration":  tolerationBlock(cmp.Or(s.tolerated, s.roles)),
		"timeouts":    timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		"tensorboard": tensorBoardBlock(),
	}
	for name, b := range s.blocks {
		blocks[name] = b
	}
	return schema.Schema{
		// See withDefaultsUpgraders.
		Version:             podSchemaVersion,
		MarkdownDescription: s.description,
		Attributes:          mergeAttributes(shared, podAttributes(s.roles, cmp.Or(s.metadata, jobMetadata(s.roles))), statusAttributes(), s.own),
		Blocks:              blocks,
	}
}

// terraformOnly are the job attributes and blocks only Terraform holds: changing them changes
// nothing in the cluster.
var terraformOnly = []string{"wait_for", "timeouts", "recreate_if_missing"}
