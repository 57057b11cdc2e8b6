package kueue

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
)

// QueueProblems are what Kueue's objects of one configuration, taken together, say is wrong and
// no one of them says alone (the provider function queue_problems, which a configuration calls
// with all of them at once): a flavor no ClusterQueue covers (its nodes take no queued job), and
// a borrowing limit beyond what the rest of the queue's cohort could ever lend it (its nominal
// quotas, or their lending limits where set) for that flavor and resource. Each names both ends.
// A cohort's members are the queues given; nested cohorts (Cohort objects) are not counted.
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
	// What each member of a cohort lends, by flavor and resource.
	lends := map[string]map[FlavorResource]resource.Quantity{}
	for _, q := range queues {
		if q.Cohort == "" {
			continue
		}
		for _, g := range q.ResourceGroups {
			for _, f := range g.Flavors {
				for _, r := range f.Resources {
					lent := r.Nominal
					if r.LendingLimit != "" {
						lent = r.LendingLimit
					}
					if v, err := resource.ParseQuantity(lent); err == nil {
						if lends[q.Name] == nil {
							lends[q.Name] = map[FlavorResource]resource.Quantity{}
						}
						lends[q.Name][FlavorResource{f.Name, r.Name}] = v
					}
				}
			}
		}
	}
	for _, q := range queues {
		if q.Cohort == "" {
			continue
		}
		for _, g := range q.ResourceGroups {
			for _, f := range g.Flavors {
				for _, r := range f.Resources {
					limit, err := resource.ParseQuantity(r.BorrowingLimit)
					if r.BorrowingLimit == "" || err != nil {
						continue
					}
					var others []string
					available := resource.Quantity{}
					for _, o := range queues {
						if o.Name == q.Name || o.Cohort != q.Cohort {
							continue
						}
						others = append(others, o.Name)
						if v, ok := lends[o.Name][FlavorResource{f.Name, r.Name}]; ok {
							available.Add(v)
						}
					}
					if limit.Cmp(available) > 0 {
						slices.Sort(others)
						problems = append(problems, fmt.Sprintf("ClusterQueue %s may borrow %s of %s on flavor %s, but the rest of cohort %s (%v) could lend it only %s",
							q.Name, r.BorrowingLimit, r.Name, f.Name, q.Cohort, others, available.String()))
					}
				}
			}
		}
	}
	return problems
}
