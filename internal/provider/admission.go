package provider

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// The plan of a queued job says what Kueue would do with it now, by Kueue v0.19.2's own rules
// (package kueue's model of its scheduler): admit it at once (on which flavors, borrowing from
// which cohort), admit it by preempting other workloads (which, and why), hold it (for lack of
// which quota, as Kueue would say it), or never admit it as the queues are. The jobs a plan
// creates or changes count against each other in the order the plan checks them, after the
// workloads Kueue already holds or queues. It is a warning, never an error: the queues may
// change before the apply.

// queueNamePlan is what queue_name's documentation says of the plan.
var queueNamePlan = " A plan that creates or replaces the job says in a warning what Kueue would do with it now, by Kueue's own rules: admit it " +
	"at once (on which flavors, borrowing or not), admit it by preempting other workloads (which, and why), hold it (with Kueue's reason), " +
	"or never admit it; the queued jobs planned before it count, and the queues as the plan leaves them. It adds the GPUs and other devices " +
	"the plan's queued jobs ask for up to this one, by ClusterQueue, beside what each has free now. When the configuration declares the " +
	"LocalQueue, its ClusterQueue and their flavors, and that queue could never admit the job (a resource it does not cover, a taint, " +
	"more than its quota and no cohort), the plan fails; where Kueue's configuration cannot be read and the job asks for a resource the " +
	"queue does not cover, it warns instead (Kueue may be configured to leave it out). What Kueue counts follows its configuration where " +
	"the plan can read it (excluded resources, resource transformations), and the plan fails for a kind whose integration it does not " +
	fmt.Sprintf("run; where it cannot, a job Kueue neither suspends nor gives a Workload within %d seconds fails the create, naming the integration, ", int(jobs.KueueGrace.Seconds())) +
	"rather than run outside every quota. When its ClusterQueue dispatches through MultiKueue, the warning also says which " +
	"worker clusters would admit the job's copy now, each by its own queues (those given in the provider's `worker_cluster` blocks). " +
	fmt.Sprintf("A LocalQueue the same apply makes without a reference is waited for up to %d seconds at create.", needSeconds)

// predictAdmission warns in the plan of a queued job what Kueue would do with it now, and for a
// ClusterQueue whose MultiKueue admission check dispatches its jobs, what each worker cluster's
// Kueue would do with the copy.
func (r *jobResource) predictAdmission(ctx context.Context, resp *resource.ModifyPlanResponse, obj *unstructured.Unstructured, roles []jobs.RolePods) {
	key := obj.GetNamespace() + "/" + obj.GetName()
	here, why, err := predictIn(ctx, r.client, r.declared, r.kind, obj, roles)
	switch {
	case err != nil:
		resp.Diagnostics.AddWarning(fmt.Sprintf("%s %s: Kueue's admission not predicted", r.kind.Object, key),
			fmt.Sprintf("The plan cannot say what Kueue would do with the job: %v. The prediction lists Kueue's queues and every "+
				"namespace's Workloads, which the role terraform-provider-training-admission-prediction grants; the job is queued as usual. "+
				"To plan without predictions, set admission_prediction = false in the provider block.", err))
		return
	case why != "":
		// A LocalQueue this apply makes beside the job, without a reference: the create waits.
		resp.Diagnostics.AddAttributeWarning(path.Root("queue_name"), fmt.Sprintf("%s %s: Kueue's admission not predicted", r.kind.Object, key),
			fmt.Sprintf("The plan cannot say what Kueue would do with the job: %s yet. If this apply makes it, the create waits up to %d seconds for it; "+
				"otherwise the apply fails on queue_name and creates nothing.", why, needSeconds))
		return
	}
	if here.noWorkload != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Kueue would not queue %s %s", r.kind.Object, key),
			"Kueue makes no Workload for the job, so it stays suspended, never admitted: "+here.noWorkload+". Make the class, or name "+
				"one that exists; the apply goes ahead.")
		return
	}
	summary := admissionSummary(r.kind, key, here.queue, here.p, here.orderDecides)
	detail := admissionDetail(here.state, here.queue, here.p, here.before, here.tally) + caveats(here)
	if checks := here.state.Provisioning[here.queue]; len(checks) > 0 {
		summary, detail = provisioningSaid(summary, detail, here.queue, here.p.Admitted, checks)
	}
	if fleet := here.state.Fleets[here.queue]; len(fleet) > 0 {
		dispatch, said := r.predictDispatch(ctx, fleet, obj, roles)
		summary += dispatch
		detail += " MultiKueue dispatches it from ClusterQueue " + here.queue + " to its worker clusters, and it runs in the first that admits it: " + said + "."
	}
	resp.Diagnostics.AddWarning(summary, detail)
}

// admissionPrediction is what one cluster's Kueue would do with a planned job: its ClusterQueue,
// the prediction, how many queued jobs of the plan come before it, and the devices they ask for;
// or why Kueue would make no Workload for it (noWorkload).
type admissionPrediction struct {
	state  *kube.QueueState
	queue  string
	p      kueue.Prediction
	before int
	tally  string
	// orderDecides: the prediction differs had the apply created this job before the plan's
	// other queued jobs of its ClusterQueue (it creates them in parallel).
	orderDecides bool
	// unknown are what the prediction could not read, each said as what it leaves out.
	unknown    []string
	noWorkload string
}

// predictIn predicts what the Kueue of client's cluster would do with the job now, with the
// queues the plan declares overlaid (declared, when the plan's queues are that cluster's). why
// says why there is no prediction (there is no LocalQueue); err, that Kueue's queues and
// workloads cannot be read.
func predictIn(ctx context.Context, client *kube.Client, declared *kueue.Declared, kind *jobs.Kind, obj *unstructured.Unstructured,
	roles []jobs.RolePods) (out admissionPrediction, why string, err error) {
	state, err := client.SharedQueueState(ctx)
	if err != nil {
		return out, "", fmt.Errorf("reading Kueue's queues and workloads: %w", err)
	}
	key := obj.GetNamespace() + "/" + obj.GetName()
	flavors, queues, localQueues, cohorts := state.Flavors, state.Queues, state.LocalQueues, state.Cohorts
	if declared != nil {
		flavors, queues, localQueues = declared.Overlay(flavors, queues, localQueues)
		cohorts = declared.OverlayCohorts(cohorts)
	}
	localQueue := jobs.LocalQueueKey(obj)
	queue := localQueues[localQueue]
	if queue == "" {
		// Here the apply says so, and creates nothing; in a worker, Kueue holds the copy.
		return out, "there is no LocalQueue " + localQueue, nil
	}
	priority, noWorkload := jobPriority(state, declared, kind, obj, roles)
	if noWorkload != "" {
		return admissionPrediction{state: state, queue: queue, noWorkload: noWorkload}, "", nil
	}
	wl := &kueue.Workload{Key: key, UID: "planned:" + key, Queue: queue, Priority: priority, Created: time.Now()}
	var unknown []string
	cfg, cfgErr := client.KueueConfig(ctx)
	if cfgErr != nil {
		unknown = append(unknown, "Kueue's configuration ("+cfgErr.Error()+"), which may leave resources out of quota or transform them, "+
			"share borrowed quota fairly, or wait for a workload's pods before it admits the next; it assumes Kueue's defaults")
	} else {
		for _, u := range cfg.Unmodeled(state.Release) {
			unknown = append(unknown, "what Kueue's configuration turns on: "+u)
		}
	}
	if wl.NamespaceLabels, err = client.NamespaceLabels(ctx, obj.GetNamespace()); err != nil || wl.NamespaceLabels == nil {
		unknown = append(unknown, fmt.Sprintf("whether ClusterQueue %s takes jobs from namespace %s (%s)", queue, obj.GetNamespace(),
			cmp.Or(fmt.Sprint(err), "it does not exist yet")))
	}
	if u := defaultClassUnknown(state, declared, obj); u != "" {
		unknown = append(unknown, u)
	}
	limitRanges, err := client.SharedLimitRanges(ctx, obj.GetNamespace())
	if err != nil {
		unknown = append(unknown, "the defaults of the namespace's LimitRanges ("+err.Error()+")")
	}
	overheads := map[string]corev1.ResourceList{}
	for _, role := range roles {
		spec := role.Template.Spec
		if name := spec.RuntimeClassName; name != nil && spec.Overhead == nil {
			if _, read := overheads[*name]; !read {
				if overheads[*name], err = client.RuntimeClassOverhead(ctx, *name); err != nil {
					unknown = append(unknown, "the overhead of RuntimeClass "+*name+" ("+err.Error()+")")
				}
			}
		}
		var overhead corev1.ResourceList
		if name := spec.RuntimeClassName; name != nil {
			overhead = overheads[*name]
		}
		ps := kueue.CountedPodSet(role.Role, int64(role.Count), kueue.AdjustPodSpec(spec, limitRanges, overhead), cfg)
		ps.RequiredTopology = role.Template.Annotations[jobs.RequiredTopologyAnnotation]
		wl.PodSets = append(wl.PodSets, ps)
	}
	owner := kind.Object + " " + key
	var holding, pending []*kueue.Workload
	for _, w := range state.Workloads {
		switch {
		case state.Owners[w] == owner: // the job's own Workload: the plan replaces or changes it
		case w.Usage != nil:
			holding = append(holding, w)
		default:
			pending = append(pending, w)
		}
	}
	snapshot, err := kueue.NewSnapshot(state.Read, flavors, queues, state.Fungibility, cohorts, holding)
	if err != nil {
		return out, err.Error(), nil //nolint:nilerr // queues Kueue cannot build a snapshot of give no prediction: why says so
	}
	snapshot.SetRelease(state.Release)
	if cfg != nil && cfg.FairSharing {
		snapshot.SetFairSharing(cfg.FairSharingStrategies)
	}
	if state.ReleaseUnknown != "" {
		unknown = append(unknown, "which Kueue release the cluster runs, whose rules differ before v0.18 (its ClusterQueue schema: "+
			state.ReleaseUnknown+"); it follows v0.18's and later")
	}
	if nodes, err := client.SharedNodes(ctx); err == nil {
		snapshot.SetNodes(nodes)
	} else {
		tflog.Debug(ctx, "topology check skipped: the nodes cannot be listed", map[string]any{"error": err.Error()})
	}
	planned := state.Plan(wl)
	predictions := snapshot.Predict(append(pending, planned...))
	p := predictions[len(predictions)-1]
	tally := kueue.Tally{}
	for _, w := range planned {
		tally.Add(w)
	}
	return admissionPrediction{state: state, queue: queue, p: p, before: len(planned) - 1, tally: tally.String(snapshot),
		orderDecides: orderDecides(snapshot, pending, planned, p), unknown: unknown}, "", nil
}

// orderDecides says whether the prediction p of the last of planned (this job) would differ had
// the apply created it before the plan's other queued jobs of its ClusterQueue, which it creates
// in parallel: Kueue takes workloads of equal priority in the order of their creation.
func orderDecides(snapshot *kueue.Snapshot, pending, planned []*kueue.Workload, p kueue.Prediction) bool {
	wl := planned[len(planned)-1]
	var siblings []*kueue.Workload
	first := *wl
	for _, w := range planned[:len(planned)-1] {
		if w.Queue == wl.Queue {
			siblings = append(siblings, w)
			if !w.Created.After(first.Created) {
				first.Created = w.Created.Add(-time.Millisecond)
			}
		}
	}
	if len(siblings) == 0 {
		return false
	}
	ahead := snapshot.Predict(append(append(append([]*kueue.Workload(nil), pending...), siblings...), &first))
	q := ahead[len(ahead)-1]
	return q.Admitted != p.Admitted || q.Never != p.Never || len(q.Targets) != len(p.Targets)
}

// caveats says what a prediction could not read or does not follow (Kueue's configuration among
// them, where it cannot be read).
func caveats(p admissionPrediction) string {
	var s string
	if len(p.unknown) > 0 {
		s += " Not known to the prediction: " + strings.Join(p.unknown, "; ") + "."
	}
	if p.orderDecides {
		s += " Whether Kueue admits it depends on the order in which the apply creates this plan's queued jobs of ClusterQueue " +
			p.queue + ", which it creates in parallel: Kueue takes jobs of equal priority in the order their Workloads were made."
	}
	return s
}

// defaultWorkloadPriorityClass is the WorkloadPriorityClass Kueue v0.18 and later give a job that
// names none, where their feature gate WorkloadPriorityClassDefaulting is on
// (pkg/controller/jobframework/defaults.go, ApplyDefaultWorkloadPriorityClass).
const defaultWorkloadPriorityClass = "default"

// defaultClassUnknown says, for a job that names no WorkloadPriorityClass where the cluster (or
// the plan) has one named "default", that Kueue gives the job that class's value only where its
// feature gate is on (alpha, off by default in v0.19), which is Kueue's command line and cannot
// be read: the prediction takes the job's own priority. "" otherwise.
func defaultClassUnknown(state *kube.QueueState, declared *kueue.Declared, obj *unstructured.Unstructured) string {
	if obj.GetLabels()[jobs.PriorityClassLabel] != "" || state.Release == kueue.V017 {
		return ""
	}
	value, ok := workloadPriorityOf(state, declared, defaultWorkloadPriorityClass)
	if !ok {
		return ""
	}
	return fmt.Sprintf("whether Kueue gives the job the WorkloadPriorityClass %q (value %d), as it does to a job that names none where its "+
		"feature gate WorkloadPriorityClassDefaulting is on (off by default), a flag of Kueue's command line; it takes the job's own "+
		"priority. Set workload_priority_class to be sure", defaultWorkloadPriorityClass, value)
}

// workloadPriorityOf is the value of the WorkloadPriorityClass name as the plan leaves it: as the
// plan declares it, else as the cluster has it; ok is false where neither has it.
func workloadPriorityOf(state *kube.QueueState, declared *kueue.Declared, name string) (value int32, ok bool) {
	if declared != nil {
		if value, ok = declared.PriorityOf(name); ok {
			return value, true
		}
	}
	value, ok = state.WorkloadPriorityClasses[name]
	return value, ok
}

// jobPriority is the priority Kueue v0.19.2 gives a job's Workload: its WorkloadPriorityClass (by
// Kueue's label: as the plan declares it, else as the cluster has it), else its PriorityClass
// (the kind's, as Kueue reads it; for a kind that has none of its own, the first role whose pods
// name one), else the cluster's default. noWorkload says why Kueue would make no Workload: the
// class named does not exist.
func jobPriority(state *kube.QueueState, declared *kueue.Declared, kind *jobs.Kind, obj *unstructured.Unstructured, roles []jobs.RolePods) (priority int32, noWorkload string) {
	if name := obj.GetLabels()[jobs.PriorityClassLabel]; name != "" {
		v, ok := workloadPriorityOf(state, declared, name)
		if !ok {
			return 0, "its WorkloadPriorityClass " + name + " (workload_priority_class) does not exist"
		}
		return v, ""
	}
	name := kind.PriorityClass(obj)
	for _, role := range roles {
		if name != "" {
			break
		}
		name = role.Template.Spec.PriorityClassName
	}
	if name == "" {
		return state.DefaultPriority, ""
	}
	v, ok := state.PriorityClasses[name]
	if !ok {
		return 0, "its PriorityClass " + name + " does not exist"
	}
	return v, ""
}

func admissionSummary(kind *jobs.Kind, key, queue string, p kueue.Prediction, orderDecides bool) string {
	if orderDecides {
		what := "hold"
		if p.Admitted {
			what = "admit"
		}
		return fmt.Sprintf("Kueue may %s %s %s, as the apply orders this plan's jobs", what, kind.Object, key)
	}
	switch {
	case p.Admitted && len(p.Targets) > 0:
		return fmt.Sprintf("Kueue would admit %s %s by preempting %d workload(s)", kind.Object, key, len(p.Targets))
	case p.Admitted:
		return fmt.Sprintf("Kueue would admit %s %s at once", kind.Object, key)
	case p.Never:
		return fmt.Sprintf("Kueue would never admit %s %s as ClusterQueue %s is now", kind.Object, key, queue)
	}
	return fmt.Sprintf("Kueue would hold %s %s in ClusterQueue %s", kind.Object, key, queue)
}

// admissionDetail says what Kueue would do: the flavors, the borrowing, the workloads
// preempted and why, or Kueue's reason for holding it; then the devices (GPUs and other
// extended resources) the plan's queued jobs ask for so far, by ClusterQueue and in all, beside
// what each queue has free now (kueue.Tally): the last queued job's plan says the plan's whole.
func admissionDetail(state *kube.QueueState, queue string, p kueue.Prediction, before int, tally string) string {
	var b strings.Builder
	if p.Admitted {
		fmt.Fprintf(&b, "In ClusterQueue %s, on flavors: %s.", queue, flavorList(p.Flavors))
		if p.Borrowing > 0 {
			b.WriteString(" It borrows quota from its cohort.")
		}
		for _, t := range p.Targets {
			owner := state.Owners[t.Workload]
			if owner == "" {
				owner = "Workload " + t.Workload.Key
			}
			fmt.Fprintf(&b, " Preempts %s (priority %d): %s.", owner, t.Workload.Priority, preemptionWhy(t.Reason))
		}
	} else {
		b.WriteString("Kueue would say: " + p.Message + ".")
	}
	if before > 0 {
		fmt.Fprintf(&b, " This counts %d queued job(s) planned before it in this plan.", before)
	}
	b.WriteString(" This is predicted from Kueue's queues and workloads as they are now; the apply goes ahead.")
	if tally != "" {
		b.WriteString(" Devices asked for by this plan's queued jobs up to this one: " + tally + ".")
	}
	return b.String()
}

func preemptionWhy(reason string) string {
	switch reason {
	case kueue.InClusterQueue:
		return "a lower priority in the same ClusterQueue"
	case kueue.InCohortReclaimWhileBorrowing:
		return "reclaimed within the cohort while this queue borrows"
	case kueue.InCohortFairSharing:
		return "fair sharing: its queue's share of the borrowed quota is above what this queue's would be"
	}
	return "reclaimed within the cohort (its queue borrows this queue's quota)"
}

// flavorList is each pod set's flavors, as "worker: cpu on default, nvidia.com/gpu on a100".
func flavorList(flavors map[string]map[string]string) string {
	var parts []string
	for ps, byResource := range flavors {
		if len(byResource) == 0 {
			continue // a pod set that asks for nothing the queue covers
		}
		var rs []string
		for r, f := range byResource {
			rs = append(rs, r+" on "+f)
		}
		sort.Strings(rs)
		parts = append(parts, ps+": "+strings.Join(rs, ", "))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
