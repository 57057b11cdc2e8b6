package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// The quotas of one configuration are checked as a whole: each flavor, ClusterQueue and
// LocalQueue a plan creates or changes is recorded as it is planned (kueue.Declared; Terraform
// plans an object after those it refers to), and checked against what the plan declared before
// it and what the cluster has: a LocalQueue of a ClusterQueue that is nowhere, a ClusterQueue of a
// flavor that is nowhere (warnings: Kueue would keep either inactive). A queued job's plan then
// sees the queues as the plan leaves them, and a job whose LocalQueue, ClusterQueue and flavors
// the configuration declares is refused at plan when that queue could never admit it
// (kueue.NeverAdmits: a resource it does not cover, taints, a quota too small with no cohort).

// declare records a Kueue object the plan creates or changes, and warns where what it names is
// neither in the cluster nor declared before it.
func (r *objectResource[M, PM]) declare(ctx context.Context, obj *unstructured.Unstructured, resp *resource.ModifyPlanResponse) {
	if r.declared == nil {
		return
	}
	var findings []kueue.Finding
	switch obj.GetKind() {
	case "ResourceFlavor":
		f, err := kueue.ReadFlavor(obj)
		if err != nil {
			return
		}
		r.declared.Flavor(f)
	case "ClusterQueue":
		q, err := kueue.ReadClusterQueue(obj)
		if err != nil {
			return
		}
		r.declared.ClusterQueue(q)
		findings = r.declared.CheckClusterQueue(q, r.clusterNames(ctx).flavors)
	case "Cohort":
		c := kueue.ReadCohort(obj)
		r.declared.Cohort(c)
		findings = r.declared.CheckCohort(c, r.clusterNames(ctx).cohorts)
	case "WorkloadPriorityClass":
		if c, err := kueue.ReadWorkloadPriorityClass(obj); err == nil {
			r.declared.PriorityClass(c)
		}
	case "LocalQueue":
		lq := kueue.ReadLocalQueue(obj)
		key := obj.GetNamespace() + "/" + obj.GetName()
		r.declared.LocalQueue(key, lq.ClusterQueue)
		findings = r.declared.CheckLocalQueue(key, lq.ClusterQueue, r.clusterNames(ctx).queues)
	}
	for _, f := range findings {
		resp.Diagnostics.AddWarning(f.Summary, f.Detail)
	}
}

// clusterQueueNames are the flavors and ClusterQueues the cluster has, by name, and its Cohorts;
// all nil when Kueue's objects cannot be read.
type clusterQueueNames struct {
	flavors, queues map[string]bool
	cohorts         []kueue.CohortSpec
}

func (r *objectResource[M, PM]) clusterNames(ctx context.Context) clusterQueueNames {
	if r.client == nil {
		return clusterQueueNames{}
	}
	state, err := r.client.SharedQueues(ctx)
	if err != nil {
		tflog.Debug(ctx, "queue checks against the cluster skipped: Kueue's objects cannot be read", map[string]any{"error": err.Error()})
		return clusterQueueNames{}
	}
	// cohorts is not nil when read, even where the cluster has none.
	names := clusterQueueNames{flavors: map[string]bool{}, queues: map[string]bool{}, cohorts: append([]kueue.CohortSpec{}, state.Cohorts...)}
	for _, f := range state.Flavors {
		names.flavors[f.Name] = true
	}
	for _, q := range state.Queues {
		names.queues[q.Name] = true
	}
	return names
}

// checkDeclaredQueue refuses at plan a job that the queue its configuration declares could never
// admit, and says whether it did. What Kueue counts of the pods' requests follows its
// configuration cfg; where that cannot be read (nil), a job asking for a resource the queue does
// not cover is warned of, not refused: Kueue may be configured to leave it out of quota.
func (r *jobResource) checkDeclaredQueue(resp *resource.ModifyPlanResponse, obj *unstructured.Unstructured, roles []jobs.RolePods, cfg *kueue.Config) bool {
	if r.declared == nil {
		return false
	}
	local := jobs.LocalQueueKey(obj)
	queue, flavors, ok := r.declared.Queue(local)
	if !ok {
		return false
	}
	key := obj.GetNamespace() + "/" + obj.GetName()
	wl := &kueue.Workload{Key: key, UID: "planned:" + key, Queue: queue.Name, Created: time.Now()}
	for _, role := range roles {
		ps := kueue.CountedPodSet(role.Role, int64(role.Count), role.Template.Spec, cfg)
		if cfg != nil && cfg.IgnoreUndeclared {
			for name := range ps.Requests {
				if !queue.Covers(name) {
					delete(ps.Requests, name)
				}
			}
		}
		wl.PodSets = append(wl.PodSets, ps)
	}
	why := kueue.NeverAdmits(queue, flavors, wl)
	if why == "" {
		return false
	}
	summary := fmt.Sprintf("Kueue would never admit %s %s in ClusterQueue %s", r.kind.Object, key, queue.Name)
	detail := fmt.Sprintf("LocalQueue %s submits to ClusterQueue %s, which this configuration declares so that it can never admit the job, whatever else runs: "+
		"Kueue would say %q. Cover what the job asks for in the ClusterQueue (its resource groups and flavors), or change the job; "+
		"to hold jobs on purpose, set the ClusterQueue's stop_policy = \"Hold\".", local, queue.Name, why)
	// What Kueue counts is its configuration's to say: without it, a refusal for the resources
	// the job asks for is not certain (a taint or a node label is).
	if resourceBound := strings.Contains(why, "unavailable in ClusterQueue") || strings.Contains(why, "insufficient"); cfg == nil && resourceBound {
		resp.Diagnostics.AddAttributeWarning(path.Root("queue_name"), summary+" unless its configuration counts the job otherwise",
			detail+" Kueue's configuration may leave resources out of quota or count them as others (resources.excludeResourcePrefixes, "+
				"resources.transformations, quotaCheckStrategy: IgnoreUndeclared), and the provider cannot read it here, so the apply goes ahead.")
		return true
	}
	resp.Diagnostics.AddAttributeError(path.Root("queue_name"), summary, detail+" Nothing was created.")
	return true
}
