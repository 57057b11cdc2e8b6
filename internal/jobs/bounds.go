package jobs

import "fmt"

// CheckWorkerBounds says why workers is not within min and max (a *BoundsError), or nil: the
// one rule of every elastic job's bounds (elastic Horovod's --min-np and --max-np, torchrun's
// --nnodes=MIN:MAX), which the plan checks too.
func CheckWorkerBounds(workers, lo, hi int32) error {
	if lo > hi || workers < lo || workers > hi {
		return &BoundsError{Workers: workers, Min: lo, Max: hi}
	}
	return nil
}

// BoundsError is a worker count and its bounds that break the rule: the minimum exceeds the
// maximum (Inverted), or the count is outside them.
type BoundsError struct{ Workers, Min, Max int32 }

// Inverted says whether the minimum exceeds the maximum.
func (e *BoundsError) Inverted() bool { return e.Min > e.Max }

func (e *BoundsError) Error() string {
	if e.Inverted() {
		return fmt.Sprintf("the minimum (%d) exceeds the maximum (%d)", e.Min, e.Max)
	}
	return fmt.Sprintf("%d workers is not within the bounds %d..%d", e.Workers, e.Min, e.Max)
}
