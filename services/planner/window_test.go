package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// TestFreeZoneIsPlannedAtOnce: with nothing more queued, a change to a
// free zone is planned at once, not after --batch-window (an hour here).
func TestFreeZoneIsPlannedAtOnce(t *testing.T) {
	nc, js := startBus(t)
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{BatchWindow: time.Hour})
	www := "www." + zone
	wanted(t, js, rr(www, "A", 0, "192.0.2.1"))
	if got := planLines(nextPlan(t, sub)); !slices.Contains(got, "create A www 192.0.2.1") {
		t.Fatalf("plan:\n%s", strings.Join(got, "\n"))
	}
}

// TestChangesGatherWhileTheZoneIsBusy: changes that come while the zone's
// plan is out wait for its result, and then go out together in one plan.
func TestChangesGatherWhileTheZoneIsBusy(t *testing.T) {
	nc, js := startBus(t)
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{BatchWindow: time.Hour})
	wanted(t, js, rr("a."+zone, "A", 0, "192.0.2.1"))
	first := nextPlan(t, sub)

	wanted(t, js, rr("b."+zone, "A", 0, "192.0.2.2"))
	wanted(t, js, rr("c."+zone, "A", 0, "192.0.2.3"))
	if msg, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("planned while the zone's plan was out: %s", msg.Subject)
	}
	publish(t, js, events.ResultSubject("p", zone), &events.Result{PlanID: first.ID, Provider: "p", Zone: zone,
		Status: events.ResultApplied})
	got := planLines(nextPlan(t, sub))
	for _, want := range []string{"create A b 192.0.2.2", "create A c 192.0.2.3"} {
		if !slices.Contains(got, want) {
			t.Fatalf("the changes gathered while the zone was busy must go out together; plan:\n%s", strings.Join(got, "\n"))
		}
	}
}

// TestWindowTimesPasses: with nothing queued a pass runs at once, unless
// the last one ended less than its own length ago; with messages queued
// it waits at most the window.
func TestWindowTimesPasses(t *testing.T) {
	const max = 20 * time.Millisecond
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	w := newWindow(max)
	defer w.stop()
	if !w.passNow(false, at(0)) {
		t.Fatal("nothing queued and no pass before: the pass must run at once")
	}
	w.passed(at(0), at(time.Millisecond)) // a 1ms pass
	if w.passNow(true, at(2*time.Millisecond)) || w.due != at(2*time.Millisecond+max) {
		t.Fatalf("with messages queued the pass waits the window: due %v after t0", w.due.Sub(t0))
	}
	if w.passNow(true, at(10*time.Millisecond)) || w.due != at(2*time.Millisecond+max) {
		t.Fatal("more queued messages must not postpone the pass")
	}
	if !w.passNow(false, at(11*time.Millisecond)) || w.armed() {
		t.Fatal("once nothing is queued the armed pass must run at once")
	}
	w.passed(at(11*time.Millisecond), at(19*time.Millisecond)) // an 8ms pass
	if w.passNow(false, at(20*time.Millisecond)) || w.due != at(27*time.Millisecond) {
		t.Fatalf("a pass right after an 8ms one waits until 8ms after it: due %v after t0", w.due.Sub(t0))
	}
	if !w.passNow(false, at(27*time.Millisecond)) {
		t.Fatal("the spaced pass must run when due")
	}
	w.passed(at(27*time.Millisecond), at(127*time.Millisecond)) // a pass longer than the window
	if w.passNow(false, at(128*time.Millisecond)) || w.due != at(128*time.Millisecond+max) {
		t.Fatalf("spacing must never wait longer than the window: due %v after t0", w.due.Sub(t0))
	}
}
