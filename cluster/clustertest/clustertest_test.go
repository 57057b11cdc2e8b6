package clustertest

import (
	"runtime"
	"testing"
)

// endOf records how a test helper ended a test, without ending the one that calls it.
type endOf struct {
	testing.TB
	skipped, failed bool
}

func (e *endOf) Helper()               {}
func (e *endOf) Skip(...any)           { e.skipped = true; runtime.Goexit() }
func (e *endOf) Fatal(...any)          { e.failed = true; runtime.Goexit() }
func (e *endOf) Skipf(string, ...any)  { e.skipped = true; runtime.Goexit() }
func (e *endOf) Fatalf(string, ...any) { e.failed = true; runtime.Goexit() }

// realNodeForIn runs RealNodeFor as a test would, with the lane's reason for having no real node
// (asked = false: as the package starts, before any lane asked for the node).
func realNodeForIn(t *testing.T, asked bool, reason string) *endOf {
	t.Helper()
	saved := noRealNode
	t.Cleanup(func() { noRealNode = saved })
	if asked {
		noRealNode = reason
	}
	e := &endOf{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); RealNodeFor(e) }()
	<-done
	return e
}

// Outside the real node's lane, its tests skip, under CI too: every other lane runs them in
// passing (go test ./..., the acceptance lanes) and must not fail on them.
func TestRealNodeForSkipsOutsideItsLaneEvenUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	if e := realNodeForIn(t, false, ""); !e.skipped || e.failed {
		t.Fatalf("outside the real node's lane under CI: skipped %v, failed %v; want skipped", e.skipped, e.failed)
	}
}

// In the lane, a machine that cannot run the real node fails the test under CI, where a skip
// would pass a lane that proved nothing, and skips it elsewhere.
func TestRealNodeForFailsInItsLaneUnderCIWhenTheNodeCannotRun(t *testing.T) {
	t.Setenv("CI", "true")
	if e := realNodeForIn(t, true, "no containerd"); !e.failed {
		t.Fatalf("in the lane, under CI, without a real node: failed %v; want failed", e.failed)
	}
	t.Setenv("CI", "")
	if e := realNodeForIn(t, true, "no containerd"); !e.skipped || e.failed {
		t.Fatalf("in the lane, outside CI, without a real node: skipped %v, failed %v; want skipped", e.skipped, e.failed)
	}
}
