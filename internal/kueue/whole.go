package kueue

import (
	"fmt"
	"slices"
	"time"
)

// QueueProblems are what Kueue's objects of one configuration, taken together, say is wrong and
// no one of them says alone (the provider function queue_problems, which a configuration calls
// with all of them at once): a flavor no ClusterQueue covers (its nodes take no queued job), and
// a borrowing limit beyond what the rest of the queue's cohort could ever lend it for that
// flavor and resource, by the quota tree of the admission prediction (Snapshot: the other
// queues' nominal quotas, or their lending limits where set). Each names both ends. A cohort's
// members are the queues given; nested cohorts (Cohort objects) are not counted. Quotas that
// are not quantities are their resources' own errors, and leave the borrowing unchecked.
func QueueProblems(flavors []string, queues []ClusterQueueSpec) []string {
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
	s, err := NewSnapshot(time.Time{}, nil, queues, nil, nil, nil)
	if err != nil {
		return problems
	}
	for _, q := range queues {
		n := s.queues[q.Name].node
		if n.parent == nil {
			continue
		}
		var others []string
		for _, o := range queues {
			if o.Name != q.Name && o.Cohort == q.Cohort {
				others = append(others, o.Name)
			}
		}
		slices.Sort(others)
		for _, g := range q.ResourceGroups {
			for _, f := range g.Flavors {
				for _, r := range f.Resources {
					fr := FlavorResource{f.Name, r.Name}
					limit := n.quotas[fr].borrowing
					if limit == nil {
						continue
					}
					// What the cohort holds of fr beyond what this queue put in it.
					lendable := n.parent.potentialAvailable(fr) - (n.subtree[fr] - n.localQuota(fr))
					if *limit > lendable {
						problems = append(problems, fmt.Sprintf("ClusterQueue %s may borrow %s of %s on flavor %s, but the rest of cohort %s (%v) could lend it only %s",
							q.Name, r.BorrowingLimit, r.Name, f.Name, q.Cohort, others, FormatAmount(r.Name, lendable)))
					}
				}
			}
		}
	}
	return problems
}
