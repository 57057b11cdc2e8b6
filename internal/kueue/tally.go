package kueue

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Devices is what a workload asks for of each extended resource (a domain-prefixed name: GPUs
// and other devices), all its pods together.
func Devices(wl *Workload) map[string]int64 {
	out := map[string]int64{}
	for _, ps := range wl.PodSets {
		for r, v := range ps.Requests {
			if strings.Contains(r, "/") {
				out[r] += v * ps.Count
			}
		}
	}
	return out
}

// Free is what a ClusterQueue may still use now of a resource, over the flavors of the
// resource group that covers it: its unused quota and what its cohort can lend it within its
// borrowing limit. ok is false for a queue the snapshot lacks or a resource it does not cover.
func (s *Snapshot) Free(queue, resource string) (free int64, ok bool) {
	q := s.queues[queue]
	if q == nil {
		return 0, false
	}
	g := q.groupOf(resource)
	if g == nil {
		return 0, false
	}
	for _, f := range g.flavors {
		free += max(0, q.node.available(FlavorResource{f, resource}))
	}
	return free, true
}

// A Tally is the devices a plan's queued jobs ask for, by ClusterQueue and resource.
type Tally map[string]map[string]int64

// Add counts wl's devices in its queue.
func (t Tally) Add(wl *Workload) {
	for r, v := range Devices(wl) {
		if t[wl.Queue] == nil {
			t[wl.Queue] = map[string]int64{}
		}
		t[wl.Queue][r] += v
	}
}

// String says the tally beside what each queue has free now in s: "ClusterQueue a: 4
// nvidia.com/gpu (2 free now); in all: 4 nvidia.com/gpu" ("" when it counts nothing). The free
// amounts are not added up: queues of one cohort may each borrow the same unused quota.
func (t Tally) String(s *Snapshot) string {
	var parts []string
	total := map[string]int64{}
	for _, q := range slices.Sorted(maps.Keys(t)) {
		var rs []string
		for _, r := range slices.Sorted(maps.Keys(t[q])) {
			v := t[q][r]
			total[r] += v
			if free, ok := s.Free(q, r); ok {
				rs = append(rs, fmt.Sprintf("%s %s (%s free now)", FormatAmount(r, v), r, FormatAmount(r, free)))
			} else {
				rs = append(rs, fmt.Sprintf("%s %s (not covered)", FormatAmount(r, v), r))
			}
		}
		parts = append(parts, fmt.Sprintf("ClusterQueue %s: %s", q, strings.Join(rs, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	var all []string
	for _, r := range slices.Sorted(maps.Keys(total)) {
		all = append(all, FormatAmount(r, total[r])+" "+r)
	}
	return strings.Join(parts, "; ") + "; in all: " + strings.Join(all, ", ")
}
