package kube

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// QueueState is what Kueue schedules with now, as a plan's admission prediction reads it once
// for every queued job it checks: the flavors, ClusterQueues and Cohorts, the LocalQueues (by
// "namespace/name", their ClusterQueue), the Workloads pending or holding quota (Owners: each
// one's job as "Kind namespace/name"), and the priority of every PriorityClass and
// WorkloadPriorityClass.
type QueueState struct {
	Read        time.Time
	Flavors     []kueue.FlavorSpec
	Queues      []kueue.ClusterQueueSpec
	Fungibility map[string]kueue.Fungibility
	Cohorts     []kueue.CohortSpec
	LocalQueues map[string]string
	Workloads   []*kueue.Workload
	Owners      map[*kueue.Workload]string
	// PriorityClasses are the pods' priority classes by name; DefaultPriority is the global
	// default's, or 0.
	PriorityClasses         map[string]int32
	DefaultPriority         int32
	WorkloadPriorityClasses map[string]int32
	// Fleets are, by ClusterQueue, the MultiKueue worker clusters its admission checks dispatch
	// its workloads to (through their MultiKueueConfigs); empty when none does, or when the
	// provider may not read admission checks.
	Fleets map[string][]string
	// Provisioning are, by ClusterQueue, its admission checks of Kueue's provisioning controller:
	// capacity is asked for before a workload is admitted.
	Provisioning map[string][]ProvisioningCheck
	// Release is the Kueue release whose rules differ from another's that the cluster runs, told
	// by its ClusterQueue schema (kueue.ReleaseMarker); ReleaseUnknown says why it could not be
	// read, and Release is then kueue.Current.
	Release        kueue.Release
	ReleaseUnknown string

	// planned are the queued jobs this process (a plan) has checked, which the next ones of
	// the same plan count after.
	mu      sync.Mutex
	planned []*kueue.Workload
}

// Plan records wl as a job this plan creates or changes (in place of an earlier check of the
// same job) and returns every job the plan has checked so far, wl last.
func (s *QueueState) Plan(wl *kueue.Workload) []*kueue.Workload {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.planned[:0]
	for _, w := range s.planned {
		if w.Key != wl.Key {
			kept = append(kept, w)
		}
	}
	s.planned = append(kept, wl)
	return append([]*kueue.Workload(nil), s.planned...)
}

// The APIs the admission prediction reads beside Kueue's quota objects.
var (
	priorityClassGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
)

// SharedQueues reads Kueue's queue objects once for the whole provider process: the flavors,
// ClusterQueues, Cohorts and LocalQueues, the fleets their admission checks dispatch to and the
// release; not the Workloads, which the checks of a queue's name, of a declared queue and of a
// dispatch do not read.
func (c *Client) SharedQueues(ctx context.Context) (*QueueState, error) {
	return c.queues.get(ctx, struct{}{}, func(ctx context.Context) (*QueueState, error) {
		ctx, cancel := context.WithTimeout(ctx, sharedNodesTimeout)
		defer cancel()
		tflog.Debug(ctx, "LIST Kueue's flavors, queues, cohorts and local queues (shared)")
		return c.readQueues(ctx)
	})
}

// SharedQueueState reads Kueue's state, its Workloads and the priorities among it, once for the
// whole provider process: what the admission prediction reads.
func (c *Client) SharedQueueState(ctx context.Context) (*QueueState, error) {
	return c.queueState.get(ctx, struct{}{}, func(ctx context.Context) (*QueueState, error) {
		queues, err := c.SharedQueues(ctx)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, sharedNodesTimeout)
		defer cancel()
		tflog.Debug(ctx, "LIST Kueue's workloads and the priority classes (shared)")
		return c.readWorkloads(ctx, queues)
	})
}

func (c *Client) readQueues(ctx context.Context) (*QueueState, error) {
	s := &QueueState{Read: time.Now(), Fungibility: map[string]kueue.Fungibility{}, LocalQueues: map[string]string{}}
	flavors, err := c.List(ctx, kueue.ResourceFlavorGVR, "", "")
	if err != nil {
		return nil, err
	}
	for i := range flavors {
		f, err := kueue.ReadFlavor(&flavors[i])
		if err != nil {
			return nil, fmt.Errorf("ResourceFlavor %s: %w", flavors[i].GetName(), err)
		}
		s.Flavors = append(s.Flavors, f)
	}
	queues, err := c.List(ctx, kueue.ClusterQueueGVR, "", "")
	if err != nil {
		return nil, err
	}
	for i := range queues {
		// What the provider's resource cannot say (a selector of expressions) is read all the same.
		q, _ := kueue.ReadClusterQueue(&queues[i])
		s.Queues = append(s.Queues, q)
		s.Fungibility[q.Name] = kueue.ReadFungibility(&queues[i])
	}
	cohorts, err := c.List(ctx, kueue.CohortGVR, "", "")
	if err != nil && !apierrors.IsNotFound(err) { // a Kueue without Cohort objects has implicit cohorts alone
		return nil, err
	}
	for i := range cohorts {
		s.Cohorts = append(s.Cohorts, kueue.ReadCohort(&cohorts[i]))
	}
	localQueues, err := c.List(ctx, kueue.LocalQueueGVR, "", "")
	if err != nil {
		return nil, err
	}
	for i := range localQueues {
		lq := kueue.ReadLocalQueue(&localQueues[i])
		s.LocalQueues[lq.Namespace+"/"+lq.Name] = lq.ClusterQueue
	}
	switch current, err := c.HasField(ctx, kueue.ClusterQueueGVR.GroupVersion(), "ClusterQueue", kueue.ReleaseMarker); {
	case err != nil:
		s.ReleaseUnknown = err.Error()
	case !current:
		s.Release = kueue.V017
	}
	if s.Fleets, s.Provisioning, err = c.readFleets(ctx, s.Queues); err != nil {
		// Only the prediction of where a job is dispatched needs them.
		tflog.Debug(ctx, "MultiKueue's admission checks cannot be read", map[string]any{"error": err.Error()})
	}
	return s, nil
}

// readWorkloads is queues with the Workloads pending or holding quota and the priority classes.
func (c *Client) readWorkloads(ctx context.Context, queues *QueueState) (*QueueState, error) {
	s := &QueueState{Read: queues.Read, Flavors: queues.Flavors, Queues: queues.Queues, Fungibility: queues.Fungibility, Cohorts: queues.Cohorts,
		LocalQueues: queues.LocalQueues, Fleets: queues.Fleets, Provisioning: queues.Provisioning, Release: queues.Release, ReleaseUnknown: queues.ReleaseUnknown,
		Owners: map[*kueue.Workload]string{}, PriorityClasses: map[string]int32{}, WorkloadPriorityClasses: map[string]int32{}}
	// The Workloads are read as they stream in and each decoded only when it is read: every
	// Workload carries its job's pod templates, and 1,000 of them decoded at once took a queued
	// plan's provider to 115 MiB.
	tflog.Debug(ctx, "LIST workloads")
	workloads, err := c.listJSONBy(ctx, kueue.WorkloadGVR, "", "", byNamespacedName)
	if err != nil {
		return nil, err
	}
	for _, key := range slices.Sorted(maps.Keys(workloads)) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(workloads[key]); err != nil {
			return nil, fmt.Errorf("reading Workload %s: %w", key, err)
		}
		delete(workloads, key)
		wl, ok := kueue.ReadSchedulingWorkload(u, s.LocalQueues)
		if !ok {
			continue
		}
		s.Workloads = append(s.Workloads, wl)
		for _, ref := range u.GetOwnerReferences() {
			if ref.Controller != nil && *ref.Controller {
				s.Owners[wl] = ref.Kind + " " + u.GetNamespace() + "/" + ref.Name
			}
		}
	}
	classes, err := c.List(ctx, priorityClassGVR, "", "")
	if err != nil {
		return nil, err
	}
	defaulted := false
	for _, pc := range classes {
		value, _, _ := unstructured.NestedInt64(pc.Object, "value")
		s.PriorityClasses[pc.GetName()] = int32(value)
		// Of several global defaults, Kueue (and the API server) take the lowest.
		if global, _, _ := unstructured.NestedBool(pc.Object, "globalDefault"); global && (!defaulted || int32(value) < s.DefaultPriority) {
			s.DefaultPriority, defaulted = int32(value), true
		}
	}
	wpcs, err := c.List(ctx, kueue.WorkloadPriorityClassGVR, "", "")
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	for _, pc := range wpcs {
		value, _, _ := unstructured.NestedInt64(pc.Object, "value")
		s.WorkloadPriorityClasses[pc.GetName()] = int32(value)
	}
	return s, nil
}

// ProvisioningCheck is an admission check of Kueue's provisioning controller: its name, its
// ProvisioningRequestConfig's, and whether that config is known to be missing (Kueue then keeps
// the check inactive, BadParametersRef).
type ProvisioningCheck struct {
	Check, Config string
	Missing       bool
}

// readFleets reads what each ClusterQueue's admission checks do: the worker clusters its
// MultiKueue checks dispatch to, and its checks of Kueue's provisioning controller; with no queue
// that has admission checks, it reads nothing. A ProvisioningRequestConfig that cannot be listed
// is taken to exist.
func (c *Client) readFleets(ctx context.Context, queues []kueue.ClusterQueueSpec) (map[string][]string, map[string][]ProvisioningCheck, error) {
	fleets, provisioning := map[string][]string{}, map[string][]ProvisioningCheck{}
	if !slices.ContainsFunc(queues, func(q kueue.ClusterQueueSpec) bool { return len(q.AdmissionChecks) > 0 }) {
		return fleets, provisioning, nil
	}
	checks, err := c.List(ctx, kueue.AdmissionCheckGVR, "", "")
	if err != nil {
		return fleets, provisioning, err
	}
	byCheck, provisioned := map[string]kueue.AdmissionCheckSpec{}, false
	for i := range checks {
		if check, err := kueue.ReadAdmissionCheck(&checks[i]); err == nil { // another controller's check is neither
			byCheck[check.Name] = check
			provisioned = provisioned || check.ProvisioningConfig != ""
		}
	}
	var prcs map[string]bool
	if provisioned {
		if list, err := c.List(ctx, kueue.ProvisioningRequestConfigGVR, "", ""); err == nil {
			prcs = map[string]bool{}
			for i := range list {
				prcs[list[i].GetName()] = true
			}
		}
	}
	configs, err := c.List(ctx, kueue.MultiKueueConfigGVR, "", "")
	if err != nil {
		return fleets, provisioning, err
	}
	clusters := map[string][]string{}
	for i := range configs {
		cfg := kueue.ReadMultiKueueConfig(&configs[i])
		clusters[cfg.Name] = cfg.Clusters
	}
	for _, q := range queues {
		for _, name := range q.AdmissionChecks {
			check, ok := byCheck[name]
			if ok && check.ProvisioningConfig != "" {
				provisioning[q.Name] = append(provisioning[q.Name], ProvisioningCheck{Check: name, Config: check.ProvisioningConfig,
					Missing: prcs != nil && !prcs[check.ProvisioningConfig]})
				continue
			}
			for _, cluster := range clusters[check.Config] {
				if !slices.Contains(fleets[q.Name], cluster) {
					fleets[q.Name] = append(fleets[q.Name], cluster)
				}
			}
		}
	}
	return fleets, provisioning, nil
}
