package provider

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// Actions (Terraform 1.14 and later) do to a running job what is not a desired state: restart it
// from its checkpoint, send it back to its queue. Each names the job as the training_job data
// source does, acts on it whoever made it, and waits within its timeout until what it did has
// taken effect. A job resource that manages the same job sees no drift afterwards: the job
// object, its UID and its settings are as they were.

// jobActionModel is what an action on a job is given.
type jobActionModel struct {
	Kind      types.String `tfsdk:"kind"`
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
	Timeout   types.String `tfsdk:"timeout"`
}

// clientAction is what the actions on a job share: their client.
type clientAction struct{ client *kube.Client }

func (a *clientAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// jobActionAttributes are the attributes of an action on a job; kinds are those it takes.
func jobActionAttributes(kinds []string, defaultTimeout time.Duration, timeoutCovers string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"kind": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.OneOf(kinds...)},
			MarkdownDescription: "The kind of job: " + codeList(kinds) + "."},
		"namespace": schema.StringAttribute{Optional: true, Validators: []validator.String{namespaceRule},
			MarkdownDescription: "Namespace of the job. Default `default`."},
		"name": schema.StringAttribute{Required: true, Validators: []validator.String{objectNameRule}, MarkdownDescription: "Name of the job."},
		"timeout": schema.StringAttribute{Optional: true, Validators: []validator.String{durationRule},
			MarkdownDescription: fmt.Sprintf("How long the action waits for %s, as a Go duration (`45m`). Default `%s`.", timeoutCovers, shortDuration(defaultTimeout))},
	}
}

// shortDuration writes d as `30m`, not `30m0s`.
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// durationRule checks a Go duration.
var durationRule = stringvalidator.RegexMatches(regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`), "must be a Go duration, such as `45m` or `1h30m`")

// actionKinds are the kinds of job the job actions take: every kind but the elastic job, whose
// FrameworkController has no suspend.
func actionKinds() []string {
	var kinds []string
	for _, k := range jobs.Kinds() {
		if k != jobs.Elastic {
			kinds = append(kinds, k.Name)
		}
	}
	return kinds
}

// actionTimeout is the action's timeout attribute s, or def when unset.
func actionTimeout(s string, def time.Duration, diags *diag.Diagnostics) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		diags.AddAttributeError(path.Root("timeout"), "Invalid timeout", fmt.Sprintf("%q is not a positive Go duration (`45m`).", s))
	}
	return d
}

// jobCall is the job an action was invoked on, as the action found it, and the action's context,
// which ends with its timeout.
type jobCall struct {
	ctx  context.Context
	kind *jobs.Kind
	t    kube.Target
	o    jobs.Observed
	st   jobs.Status
}

// start reads the action's configuration and the job it names, as it is now; ok is false, the
// error said, when there is nothing to act on. cancel ends the action's context.
func (a *clientAction) start(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse, defaultTimeout time.Duration) (
	c jobCall, cancel context.CancelFunc, ok bool) {
	var m jobActionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	timeout := actionTimeout(m.Timeout.ValueString(), defaultTimeout, &resp.Diagnostics)
	c.kind = jobs.KindByName(m.Kind.ValueString())
	if c.kind == nil {
		resp.Diagnostics.AddAttributeError(path.Root("kind"), "Unknown kind of job", fmt.Sprintf("%q is not a kind of job this provider knows.", m.Kind.ValueString()))
	}
	if resp.Diagnostics.HasError() {
		return c, func() {}, false
	}
	namespace := m.Namespace.ValueString()
	if namespace == "" {
		namespace = "default"
	}
	c.t = jobTarget(c.kind, namespace, m.Name.ValueString())
	c.ctx, cancel = context.WithTimeout(ctx, timeout)
	c.o, c.st, ok = a.observe(c.ctx, c.kind, c.t, &resp.Diagnostics)
	return c, cancel, ok
}

// observe reads the job as it is now, with its status; ok is false, the error said, when it is gone.
func (a *clientAction) observe(ctx context.Context, kind *jobs.Kind, t kube.Target, diags *diag.Diagnostics) (jobs.Observed, jobs.Status, bool) {
	o, err := a.client.Observe(ctx, t)
	if err != nil {
		diags.AddError("Error reading "+t.String(), err.Error())
		return o, jobs.Status{}, false
	}
	if o.Object == nil {
		diags.AddError(t.String()+" is gone", fmt.Sprintf("There is no %s %s/%s: nothing was done.", kind.Object, t.Namespace, t.Name))
		return o, jobs.Status{}, false
	}
	st, err := kind.Status(o, time.Now())
	if err != nil {
		diags.AddError("Error reading the status of "+t.String(), err.Error())
		return o, st, false
	}
	return o, st, true
}

// runsAgain is the wait of an action until the job it resumed runs: done once RUNNING, failed
// with the operator's reason once FAILED.
func runsAgain(kind *jobs.Kind) kube.Check {
	return func(o jobs.Observed) (bool, time.Duration, error) {
		st, err := kind.Status(o, time.Now())
		if err != nil {
			return false, 0, err
		}
		if st.Phase == jobs.Failed {
			return false, 0, fmt.Errorf("it failed: %s", kind.Failure(o))
		}
		return st.Phase == jobs.Running, 0, nil
	}
}

// undo sends patch to t after the action's own context ended (its timeout, or Terraform
// stopped it), so that an interrupted action never leaves a job suspended or a Workload
// deactivated; it says what it did.
func (a *clientAction) undo(t kube.Target, patch []byte, what string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.client.Patch(ctx, t, k8stypes.MergePatchType, patch); err != nil {
		return fmt.Sprintf(" Undoing it failed too (%v): %s", err, what)
	}
	return " It was undone: " + what
}

// progress sends a progress message, when Terraform takes them.
func progress(resp *action.InvokeResponse, format string, args ...any) {
	if resp.SendProgress != nil {
		resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf(format, args...)})
	}
}
