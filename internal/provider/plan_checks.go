package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// runtimePlaced is a job model whose pods are made from a training runtime in the cluster (a
// TrainJob): the placement check reads them with it.
type runtimePlaced interface {
	// runtime reads the job's runtime: nil when it is not there yet (made by the same apply), or
	// its name is not known yet.
	runtime(ctx context.Context, c *kube.Client) (*unstructured.Unstructured, error)
	// runtimeTarget is the runtime, and where it is, in words; ok is false while it is not known.
	runtimeTarget() (t kube.Target, where string, ok bool)
}

// checkPlanned checks a job that the plan creates or changes: its roles' settings and pod
// patches against the job it builds (a role it lacks, a patch of what the operator relies on:
// jobs.PodPatchError, a plan error), then, against the cluster as it is now, the pods of its
// roles (a TrainJob's are those Trainer makes of it on its runtime, jobs.TrainJobRoles) against
// its namespace's Pod Security (checkPodSecurity) and against the nodes (checkPlacement). A plan
// without a reachable cluster (or without the right to read what a check reads) skips the
// cluster's checks, with a debug log.
func (r *jobResource) checkPlanned(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, p planned) {
	m := p.next
	if m == nil {
		return
	}
	if !r.served(ctx, req.Plan, resp) {
		return
	}
	// A TrainJob's runtime is read first: the job's runtime patch names each of its replicated
	// jobs (an MPI runtime's launcher as well as its nodes), so the job is built after it.
	var runtime *unstructured.Unstructured
	runtimeRead := true
	if p, ok := m.(runtimePlaced); ok && r.client != nil {
		rt, err := p.runtime(ctx, r.client)
		if err != nil || rt == nil {
			tflog.Debug(ctx, "plan checks skipped: the job's runtime cannot be read, or is made by this apply", map[string]any{"error": fmt.Sprint(err)})
			runtimeRead = false
		}
		if target, where, known := p.runtimeTarget(); known && err == nil && rt == nil {
			resp.Diagnostics.AddAttributeWarning(path.Root("runtime"), target.String()+" does not exist yet",
				fmt.Sprintf("The plan cannot check the job against its runtime: %s does not have it yet. If this apply makes it, the create "+
					"waits up to %d seconds for it; otherwise the apply fails on runtime and creates nothing.", where, needSeconds))
		}
		runtime = rt
	}
	spec, diags := m.spec(ctx)
	if diags.HasError() {
		tflog.Debug(ctx, "plan checks skipped: the job is not known until apply")
		return
	}
	obj, _, err := spec.Build()
	if err != nil {
		var patchErr *jobs.PodPatchError
		if errors.As(err, &patchErr) {
			resp.Diagnostics.AddAttributeError(path.Root(patchErr.Attribute).AtMapKey(patchErr.Role), "Invalid "+patchErr.Attribute, patchErr.Error())
		}
		return // anything else, the apply says
	}
	if r.client != nil && (!r.fieldsServed(ctx, resp, obj) || !r.dispatchServed(ctx, resp, obj)) {
		return
	}
	if r.client != nil && r.kind == jobs.Train && jobs.ReplacedResources(obj) && olderTrainer(ctx, r.client) {
		resp.Diagnostics.AddAttributeWarning(path.Root("gpus"), "Kubeflow Trainer on the cluster replaces the runtime's resources with the job's",
			"The cluster's Kubeflow Trainer is older than v2.3.0 (its TrainJob schema has no "+jobs.TrainerMarker().Field()+"), which puts "+
				"a TrainJob's resources (trainer.resourcesPerNode: gpus, cpu, memory and the other resources it sets) in place of its runtime's "+
				"instead of merging them in: a resource the runtime asks for and the job does not name is dropped from the nodes' containers. "+
				"The plan's checks count the merged resources. Name every resource the nodes need on the job, or upgrade Trainer to v2.3.0 or later.")
	}
	roles, rolesErr := r.kind.Roles(obj, runtime)
	makes := makesPods(p)
	if makes {
		checkpointKept(ctx, req, resp, m, roles, rolesErr == nil)
	}
	if r.client == nil || !runtimeRead {
		return
	}
	if rolesErr != nil {
		tflog.Debug(ctx, "plan checks skipped", map[string]any{"error": rolesErr.Error()})
		return
	}
	if makes {
		r.checkPodSecurity(ctx, resp, obj, roles)
	}
	if r.placementCheck {
		r.checkPlacement(ctx, resp, obj, roles)
	}
	// Kueue's checks, where the plan makes pods that Kueue admits: a change of a queued job's
	// labels is no new workload, and admission_prediction = false turns them all off.
	if jobs.QueueName(obj) == "" || !makes || !r.admissionPrediction {
		return
	}
	cfg, cfgErr := r.client.KueueConfig(ctx)
	if cfgErr == nil && !r.kueueManages(resp, cfg) {
		return
	}
	if !r.checkDeclaredQueue(resp, obj, roles, cfg) {
		r.predictAdmission(ctx, resp, obj, roles)
	}
}

// kueueManages fails the plan of a queued job whose kind the cluster's Kueue, as its configuration
// says, does not manage: Kueue would neither suspend nor admit it, and it would run at once
// outside every quota.
func (r *jobResource) kueueManages(resp *resource.ModifyPlanResponse, cfg *kueue.Config) bool {
	if cfg.Manages(r.kind.KueueIntegration()) {
		return true
	}
	resp.Diagnostics.AddAttributeError(path.Root("queue_name"), "Kueue does not manage "+r.kind.Object+"s on this cluster",
		fmt.Sprintf("Kueue's configuration (ConfigMap %s/%s) runs the integrations %s, not %s: Kueue would neither queue nor admit the job, "+
			"which would run at once outside every quota. Add %s to integrations.frameworks in Kueue's configuration (since Kueue v0.19 "+
			"the Kubeflow training-operator's are off unless listed) and restart Kueue, or remove queue_name.",
			kube.KueueNamespace, kube.KueueConfigMap, strings.Join(cfg.Frameworks, ", "), r.kind.KueueIntegration(), r.kind.KueueIntegration()))
	return false
}

// makesPods says whether the plan makes pods of the job: it creates or replaces the job, adds
// workers, or resumes it. A change of its labels, annotations or run policy makes none, and the
// pods that run keep running whatever their namespace enforces now.
func makesPods(p planned) bool {
	plan, state := p.next, p.prior
	if state == nil || p.replacing() {
		return true
	}
	if plan.workers().ValueInt64() > state.workers().ValueInt64() {
		return true
	}
	ps, pok := plan.(suspendable)
	ss, sok := state.(suspendable)
	return pok && sok && ss.suspended() && !ps.suspended()
}

// checkPodSecurity warns in the plan of a job whose pods the namespace's Pod Security admission
// would refuse (jobs.CheckPodSecurity), naming each role and what it lacks: the operator would
// create the job and never its pods. A warning, not an error: the API server's admission
// configuration may exempt them (its users, runtime classes and namespaces), which no client can
// read. Where it does refuse, the apply's wait fails with its reason. What an operator adds to
// the pods is not seen here.
func (r *jobResource) checkPodSecurity(ctx context.Context, resp *resource.ModifyPlanResponse, obj *unstructured.Unstructured, roles []jobs.RolePods) {
	labels, version, err := r.client.PodSecurity(ctx, obj.GetNamespace())
	if err != nil {
		tflog.Debug(ctx, "Pod Security check skipped: the namespace or the server's version cannot be read", map[string]any{"error": err.Error()})
		return
	}
	refusals, err := jobs.CheckPodSecurity(labels, version, roles)
	if err != nil {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Namespace %s has Pod Security labels its admission cannot read", obj.GetNamespace()),
			err.Error()+". The API server may refuse the job's pods; the plan goes ahead.")
		return
	}
	remedy := "Set security_context as that level asks (the attribute's documentation shows how), or run the job in another namespace."
	if r.kind.OperatorDrops != "" {
		remedy = "Note: " + r.kind.OperatorDrops + "; run it in a namespace that enforces less."
	}
	for _, refusal := range refusals {
		resp.Diagnostics.AddAttributeWarning(path.Root("security_context"),
			fmt.Sprintf("%s %s/%s may be created without its %s pods", r.kind.Object, obj.GetNamespace(), obj.GetName(), refusal.Role),
			fmt.Sprintf("Namespace %s enforces Pod Security %q, and %s. Unless the API server's admission configuration exempts them "+
				"(its operator's user, a runtime class or the namespace, which the provider cannot see), the operator will make the job "+
				"and never these pods, and the apply fails with the API server's reason. %s", obj.GetNamespace(), refusal.Level, refusal.Error(), remedy))
	}
}

// checkPlacement warns in the plan when no node of the cluster can host a role of the job, or
// the nodes cannot hold all its pods at once (jobs.CheckPlacement). It never fails a plan: the
// cluster may change before apply. A job whose ClusterQueue dispatches it through MultiKueue runs
// in a worker cluster, not here: it is checked against the nodes of each worker cluster the
// provider block gives, and not against this cluster's.
func (r *jobResource) checkPlacement(ctx context.Context, resp *resource.ModifyPlanResponse, obj *unstructured.Unstructured, roles []jobs.RolePods) {
	if fleet := r.fleetOf(ctx, obj); len(fleet) > 0 {
		for _, name := range fleet {
			if w := r.client.Worker(name); w != nil {
				r.placeOn(ctx, resp, w, "worker cluster "+name, obj, roles)
			} else {
				tflog.Debug(ctx, "placement check skipped in a worker cluster the provider block does not give", map[string]any{"worker_cluster": name})
			}
		}
		return
	}
	r.placeOn(ctx, resp, r.client, "this cluster", obj, roles)
}

// placeOn is checkPlacement against the nodes of client's cluster, called where in warnings.
func (r *jobResource) placeOn(ctx context.Context, resp *resource.ModifyPlanResponse, client *kube.Client, where string, obj *unstructured.Unstructured, roles []jobs.RolePods) {
	nodes, err := client.SharedNodes(ctx)
	if err != nil {
		tflog.Debug(ctx, "placement check skipped: the nodes cannot be listed", map[string]any{"error": err.Error(), "cluster": where})
		return
	}
	for _, w := range jobs.CheckPlacement(roles, nodes, jobs.PlacementOptions{Queued: jobs.QueueName(obj) != ""}) {
		// One summary per role: the CLI folds warnings of the same summary into one.
		resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s/%s cannot run on %s as it is: its %s pods", r.kind.Object, obj.GetNamespace(), obj.GetName(), where, w.Role),
			w.Message+" This is checked against the nodes as they are now; the apply goes ahead.")
	}
}

// fleetOf is the MultiKueue worker clusters a queued job's ClusterQueue dispatches it to, as
// Kueue's queues are now (a LocalQueue this plan declares counts); none for a job without a
// queue, or whose queue dispatches nowhere, or when the queues cannot be read.
func (r *jobResource) fleetOf(ctx context.Context, obj *unstructured.Unstructured) []string {
	if jobs.QueueName(obj) == "" {
		return nil
	}
	state, err := r.client.SharedQueues(ctx)
	if err != nil {
		return nil
	}
	localQueues := state.LocalQueues
	if r.declared != nil {
		_, _, localQueues = r.declared.Overlay(state.Flavors, state.Queues, localQueues)
	}
	return state.Fleets[localQueues[jobs.LocalQueueKey(obj)]]
}

// fieldsServed fails the plan of a job that sets a field its operator's release on the cluster
// lacks (jobs.FieldsSinceIn): the API server would drop it and the job run without it. Where the
// schema cannot be read, the apply's strict field validation says it instead.
func (r *jobResource) fieldsServed(ctx context.Context, resp *resource.ModifyPlanResponse, obj *unstructured.Unstructured) bool {
	ok := true
	for _, f := range jobs.FieldsSinceIn(r.kind.GVR, obj) {
		if lacksField(ctx, r.client, f) {
			ok = false
			resp.Diagnostics.AddAttributeError(path.Root(f.Attribute), f.Operator+" on the cluster is older than "+f.Attribute+" needs",
				fmt.Sprintf("The cluster's %s %s has no field %s, which %s sets: %s added it in %s, and an older release's API server "+
					"would drop it, so the job would run without it. Upgrade %s to %s or later, or remove %s. See %s.",
					f.Kind, r.kind.GVR.GroupVersion(), f.Field(), f.Attribute, f.Operator, f.Since, f.Operator, f.Since, f.Without, jobs.RequirementsURL))
		}
	}
	return ok
}

// dispatchServed fails the plan of a queued job whose ClusterQueue dispatches it to MultiKueue
// worker clusters when its operator's release in this cluster cannot leave it to them
// (jobs.DispatchNeeds).
func (r *jobResource) dispatchServed(ctx context.Context, resp *resource.ModifyPlanResponse, obj *unstructured.Unstructured) bool {
	need, ok := jobs.DispatchNeeds(r.kind.GVR)
	if !ok || jobs.QueueName(obj) == "" {
		return true
	}
	fleet := r.fleetOf(ctx, obj)
	if len(fleet) == 0 {
		return true
	}
	if !lacksField(ctx, r.client, need) {
		return true
	}
	resp.Diagnostics.AddAttributeError(path.Root("queue_name"), need.Operator+" on the cluster is older than MultiKueue needs",
		fmt.Sprintf("Queue %s dispatches the job to the worker clusters %s, but this cluster's %s is older than %s (its %s schema has no %s): "+
			"before %s it cannot leave a %s that MultiKueue manages to the worker clusters. Upgrade %s in this cluster to %s or later, "+
			"or remove %s. See %s.", jobs.QueueName(obj), strings.Join(fleet, ", "), need.Operator, need.Since, need.Kind, need.Field(),
			need.Since, need.Kind, need.Operator, need.Since, need.Without, jobs.RequirementsURL))
	return false
}

// olderTrainer says whether the cluster's Kubeflow Trainer is older than v2.3.0, as its TrainJob
// schema shows (jobs.TrainerMarker); false when the schema cannot be read.
func olderTrainer(ctx context.Context, c *kube.Client) bool {
	return lacksField(ctx, c, jobs.TrainerMarker())
}

// lacksField says whether the schema the cluster serves for f's kind lacks f: its operator's
// release is older than f.Since. False when the schema cannot be read (logged): every check of a
// release is skipped then, and the apply's strict field validation stands behind them.
func lacksField(ctx context.Context, c *kube.Client, f jobs.FieldSince) bool {
	has, err := c.HasField(ctx, f.GVR.GroupVersion(), f.Kind, f.Path)
	if err != nil {
		tflog.Debug(ctx, "the operator's schema was not read", map[string]any{"kind": f.Kind, "error": err.Error()})
	}
	return err == nil && !has
}

// served fails the plan when the cluster serves what the job needs at other versions only (its
// operator's release is older or newer than the provider's) and warns when it does not serve it
// at all (this apply may install it): its kind's API and, with queue_name, Kueue's. Either way the
// checks against the cluster are skipped. A cluster that cannot be read is not checked (the apply
// says).
func (r *jobResource) served(ctx context.Context, plan tfsdk.Plan, resp *resource.ModifyPlanResponse) bool {
	if r.client == nil {
		return true
	}
	needs := []schema.GroupVersionResource{r.kind.GVR}
	if _, queued := plan.Schema.GetAttributes()["queue_name"]; queued {
		var queue types.String
		if plan.GetAttribute(ctx, path.Root("queue_name"), &queue); queue.ValueString() != "" {
			needs = append(needs, kueue.LocalQueueGVR)
		}
	}
	for _, gvr := range needs {
		var notServed *kube.NotServedError
		switch err := r.client.Serves(ctx, gvr); {
		case errors.As(err, &notServed) && len(notServed.Served) == 0:
			// Not installed at all: this apply may install it (a helm_release), and the create
			// waits for it (awaitServed).
			resp.Diagnostics.AddWarning("The cluster does not serve "+gvr.GroupResource().String()+" yet",
				fmt.Sprintf("%s If this apply installs it, the create waits up to %d seconds for it; the plan's checks of the job against "+
					"the cluster wait for the apply too.", notServed.Error(), needSeconds))
			return false
		case errors.As(err, &notServed):
			resp.Diagnostics.AddError("The cluster does not serve "+gvr.GroupResource().String(), notServed.Error())
			return false
		case err != nil:
			tflog.Debug(ctx, "what the cluster serves was not read", map[string]any{"error": err.Error()})
		}
	}
	return true
}
