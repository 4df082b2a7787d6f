package planner

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestDirtyNamesSayWhatWaits: a name changed while its zone's plan is in
// flight (no applier answers here) waits, and zonestream_planner_dirty_names
// says so; the inbox is drained.
func TestDirtyNamesSayWhatWaits(t *testing.T) {
	nc, js := startBus(t)
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	wanted(t, js, rr("one."+zone, "A", 0, "192.0.2.1"))
	nextPlan(t, sub) // in flight: no result ever comes
	wanted(t, js, rr("two."+zone, "A", 0, "192.0.2.2"))
	waitUntil(t, "the second name waiting", func() bool {
		return testutil.ToFloat64(dirtyNames) >= 1 && testutil.ToFloat64(inboxMessages) == 0
	})
	if m, err := sub.NextMsg(time.Second); err == nil {
		t.Fatalf("planned while the zone's plan is in flight: %s", m.Subject)
	}
	if got := testutil.ToFloat64(dirtyNames); got < 1 {
		t.Errorf("dirty names %v a second later, want the waiting name", got)
	}
}
