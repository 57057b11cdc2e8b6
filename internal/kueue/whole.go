package kueue

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// QueueProblems are what Kueue's objects of one configuration, taken together, say is wrong and
// no one of them says alone (the provider function queue_problems, which a configuration calls
// with all of them at once): a flavor no ClusterQueue covers (its nodes take no queued job); a
// loop of cohorts (Kueue admits nothing below it and says so on no condition: cutCycles); and a
// ClusterQueue's or Cohort's borrowing limit beyond what the rest of the tree above it could ever
// lend it for that flavor and resource, by the quota tree of the admission prediction (Snapshot:
// the others' nominal quotas, or their lending limits where set, through every level). Each
// names both ends. A cohort that queues name without a Cohort given has no quota of its own.
// Quotas that are not quantities are their resources' own errors, and leave the borrowing
// unchecked.
func QueueProblems(flavors []string, queues []ClusterQueueSpec, cohorts ...CohortSpec) []string {
	var problems []string
	covered := map[string]bool{}
	for _, q := range queues {
		for _, g := range q.ResourceGroups {
			for _, f := range g.Flavors {
				covered[f.Name] = true
			}
		}
	}
	for _, f := range flavors {
		if !covered[f] {
			problems = append(problems, fmt.Sprintf("ResourceFlavor %s is covered by none of the %d ClusterQueues given: no queued job runs on its nodes", f, len(queues)))
		}
	}
	s, err := NewSnapshot(time.Time{}, nil, queues, nil, cohorts, nil)
	if err != nil {
		return problems
	}
	held := map[string][]string{}
	for _, name := range sortedKeys(s.queues) {
		if c := s.queues[name].cycle; c != "" {
			held[c] = append(held[c], name)
		}
	}
	for _, c := range sortedKeys(held) {
		problems = append(problems, fmt.Sprintf("Cohorts %s form a loop: Kueue admits nothing to the ClusterQueues below it (%s) until it is "+
			"broken, and says so on no condition", c, strings.Join(held[c], ", ")))
	}
	check := func(kind string, n *quotaNode, groups []ResourceGroup) {
		if n.parent == nil {
			return
		}
		var others []string
		for _, o := range n.parent.children {
			if o != n {
				others = append(others, o.name)
			}
		}
		slices.Sort(others)
		for _, g := range groups {
			for _, f := range g.Flavors {
				for _, r := range f.Resources {
					fr := FlavorResource{f.Name, r.Name}
					limit := n.quotas[fr].borrowing
					if limit == nil {
						continue
					}
					// What the tree above holds of fr beyond what this node put in it.
					lendable := n.parent.potentialAvailable(fr) - (n.subtree[fr] - n.localQuota(fr))
					if *limit > lendable {
						problems = append(problems, fmt.Sprintf("%s %s may borrow %s of %s on flavor %s, but the rest of cohort %s (%v) could lend it only %s",
							kind, n.name, r.BorrowingLimit, r.Name, f.Name, n.parent.name, others, FormatAmount(r.Name, lendable)))
					}
				}
			}
		}
	}
	for _, q := range queues {
		check("ClusterQueue", s.queues[q.Name].node, q.ResourceGroups)
	}
	for _, c := range cohorts {
		check("Cohort", s.cohorts[c.Name], c.ResourceGroups)
	}
	return problems
}

// AdmissionCheckProblems are what the admission checks of one configuration, taken with its
// ClusterQueues and ProvisioningRequestConfigs, say is wrong: where checks are given (checks not
// nil), a check a ClusterQueue names that is not among them (Kueue keeps the queue inactive while
// it is missing: AdmissionCheckNotFound); where configs are given (configs not nil), a
// provisioning check whose ProvisioningRequestConfig is not among them (Kueue keeps the check
// inactive, BadParametersRef, and admits no job of the queues that name it). Either may exist on
// the cluster outside the configuration, which is said.
func AdmissionCheckProblems(queues []ClusterQueueSpec, checks []AdmissionCheckSpec, configs []string) []string {
	var problems []string
	byName := map[string]AdmissionCheckSpec{}
	for _, c := range checks {
		byName[c.Name] = c
	}
	namedBy := map[string][]string{}
	for _, q := range queues {
		for _, c := range q.AdmissionChecks {
			namedBy[c] = append(namedBy[c], q.Name)
			if _, ok := byName[c]; checks != nil && !ok {
				problems = append(problems, fmt.Sprintf("ClusterQueue %s names AdmissionCheck %s, which is not among the %d given: unless it exists "+
					"on the cluster, Kueue keeps the queue inactive and admits none of its jobs", q.Name, c, len(checks)))
			}
		}
	}
	if configs == nil {
		return problems
	}
	for _, c := range checks {
		if c.ProvisioningConfig == "" || slices.Contains(configs, c.ProvisioningConfig) {
			continue
		}
		queues := "no ClusterQueue given names it"
		if len(namedBy[c.Name]) > 0 {
			queues = "it holds every job of ClusterQueue(s) " + strings.Join(namedBy[c.Name], ", ")
		}
		problems = append(problems, fmt.Sprintf("AdmissionCheck %s names ProvisioningRequestConfig %s, which is not among the %d given: unless it "+
			"exists on the cluster, Kueue keeps the check inactive, and %s", c.Name, c.ProvisioningConfig, len(configs), queues))
	}
	return problems
}
