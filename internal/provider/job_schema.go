package provider

import (
	"cmp"
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// jobSchemaSpec is what differs between the job resources' schemas.
type jobSchemaSpec struct {
	description string
	// roles names the pods the shared pod attributes apply to, for their descriptions.
	roles string
	// running says what `wait_for = "running"` waits for.
	running string
	// metadata says what the labels and annotations go to and what changing them does; by
	// default jobMetadata(roles).
	metadata metadataDoc
	// own are the kind's attributes (name and worker_count among them).
	own map[string]schema.Attribute
	// without are the shared attributes the kind cannot take: what a resource cannot take is not
	// in its schema.
	without []string
	// unqueued: the kind has no queue_name (Kueue does not run it), so nothing is admitted.
	unqueued bool
	// kind is the job's kind, whose pods stop as it says (jobs.Kind.Stops), for its checkpoint.
	kind *jobs.Kind
}

// jobSchema is a job resource's schema: the kind's own attributes and blocks, and those every
// job resource has (identity, pod attributes, tolerations, TensorBoard, status, timeouts).
func jobSchema(ctx context.Context, s jobSchemaSpec) schema.Schema {
	shared := map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "`namespace/name` of the job."},
		"uid": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "UID of the job object. A job of the same name that is not this object (deleted and made again outside " +
				"Terraform) is not taken for this resource: refresh drops the resource with a warning, and destroy never deletes it."},
		"namespace": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("default"),
			Validators:          []validator.String{namespaceRule},
			MarkdownDescription: "Namespace of the job. Default `default`."},
		"wait_for": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(waitRunning),
			Validators:          []validator.String{stringvalidator.OneOf(waitValues(s.unqueued)...)},
			MarkdownDescription: waitForDescription(s.running, s.unqueued)},
		"fail_fast": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(string(jobs.FailFastPermanent)),
			Validators: []validator.String{stringvalidator.OneOf(jobs.FailFastPolicies...)},
			MarkdownDescription: "What ends a wait for the job at once besides the job's own failure, which always does. `permanent` (the default): " +
				"what cannot pass by itself: an invalid image name; an image that is not on the node and may never be pulled; an image the " +
				fmt.Sprintf("registry says does not exist or may not be pulled, still so %d seconds after the wait first saw it (the kubelet pulls ", int(jobs.PullGrace.Seconds())) +
				fmt.Sprintf("again meanwhile, and a tag pushed a moment ago appears), or %d minutes where the pods name image pull Secrets (the ", int(jobs.MissingGrace.Minutes())) +
				"provider may not read Secrets, so a pull Secret made a moment later is given that time); a Secret, ConfigMap or key the pods' " +
				fmt.Sprintf("environment names that is still missing %d minutes after the wait first saw it missing; a security context the image ", int(jobs.MissingGrace.Minutes())) +
				"cannot meet; a command that does not exist; a container that keeps exiting, or that its runtime keeps failing to start " +
				fmt.Sprintf("(restarted %d times by the kubelet since the wait first saw it, about half a minute). ", jobs.CrashLoopRestarts) +
				"The error names the pod, the container and the kubelet's reason, and for a program its exit code and last lines. What may pass " +
				"(a registry's 429 or 5xx, a registry that does not answer, a Secret cache or the Services a kubelet has not read yet after it " +
				"restarted, a runtime or device hook that failed once) is waited on, and a wait that runs out says why in its warning. These " +
				"rules hold while the job starts: with `wait_for = \"succeeded\"`, once the job has run as `running` means, a worker that exits, " +
				"restarts or is rescheduled is its operator's to retry within its backoff limit, and only the operator's verdict fails the apply. " +
				"`never`: only the job's failure ends a wait. A create that fails leaves the job in state, tainted " +
				"(Terraform taints every failed create), so the next apply replaces it; if it runs after all because the cluster was fixed rather " +
				"than the configuration, `terraform untaint ADDRESS` keeps it. A failed update leaves it untainted. Changing it changes nothing in the cluster."},
		"min_running_seconds": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(defaultMinRunningSeconds),
			Validators: []validator.Int64{int64validator.Between(0, 3600)},
			MarkdownDescription: fmt.Sprintf("With `wait_for = \"running\"`, how long every container of the job's pods must have run since it "+
				"last started before the job counts as running: a program that fails in its first seconds (an import error, a bad flag) fails "+
				"the apply, with its exit code and last lines, instead of being recorded RUNNING. Default %d; 0 counts the job running as soon "+
				"as its pods are. Changing it changes nothing in the cluster.", defaultMinRunningSeconds)},
		"tensorboard_url": tensorBoardURLAttribute(),
		"recreate_if_missing": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "What a refresh does when the job is gone from the cluster after it was created or imported (deleted by " +
				"its TTL, its operator's retention, Kueue or a person). With false (the default) the resource stays in state with a warning, " +
				"whatever status it was last seen with: a job last seen PENDING, QUEUED or SUSPENDED may have been admitted and run to its end " +
				"since, and Terraform never runs a training again by itself; `terraform apply -replace=ADDRESS` runs it again. With true the " +
				"resource is dropped from state and the next apply creates the job again. Changing it changes nothing in the cluster."},
	}
	shared["tensorboard"] = tensorBoardAttribute()
	shared["protect_running"] = protectRunningAttribute()
	attributes := mergeAttributes(shared, podAttributes(s.roles, cmp.Or(s.metadata, jobMetadata(s.roles)), stoppingOf(s.kind)), writeOnlyEnvAttributes(s.roles), statusAttributes(), s.own)
	for _, name := range s.without {
		delete(attributes, name)
	}
	return schema.Schema{
		// See upgrade.go.
		Version:             podSchemaVersion,
		MarkdownDescription: s.description,
		Attributes:          attributes,
		// timeouts is a block, as in every provider built on the plugin framework's timeouts.
		Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})},
	}
}

// waitValues are the values of wait_for: admitted only for a kind Kueue queues.
func waitValues(unqueued bool) []string {
	if unqueued {
		return []string{waitCreated, waitRunning, waitSucceeded}
	}
	return []string{waitCreated, waitAdmitted, waitRunning, waitSucceeded}
}

func waitForDescription(running string, unqueued bool) string {
	admitted := "`admitted` (Kueue admitted a job with `queue_name`: it holds its quota and starts), "
	if unqueued {
		admitted = ""
	}
	return "What create waits for: `created` (the job is accepted), " + admitted + "`running` (" + running + ", every container having run " +
		"`min_running_seconds`) or `succeeded` (the job has run to its end: a pipeline's training step; a job that fails fails the apply " +
		"with its operator's reason, and for its programs their exit codes and last lines). Default `running`. An update that rescales or " +
		"resumes the job waits as for `running` (with `succeeded` too). A job that fails, or that its operator rejects, ends the wait at " +
		"once with the reason, and so does a pod that cannot run as `fail_fast` says. A wait that runs out on a job that is only queued or " +
		"not running yet (or, with `succeeded`, still running) leaves it in state, untainted, with a warning saying why; the create " +
		"timeout bounds it (see Timeouts), so give a `succeeded` wait a `timeouts.create` longer than the training."
}

// defaultMinRunningSeconds is min_running_seconds' default: long enough for a Python program's
// imports and argument parsing, the usual first failures.
const defaultMinRunningSeconds = 10
