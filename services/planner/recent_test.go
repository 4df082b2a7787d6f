package planner

import (
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// gone: the provider applied svc-i's delete, its ownership record with it.
func (g *guarded) gone(i int) {
	feed(g.t, g.s, events.ObservedSubject("p", svcName(i)), &events.ObservedState{Provider: "p", Zone: zone, DNSName: svcName(i)})
	feed(g.t, g.s, events.ObservedSubject("p", "a-"+svcName(i)), &events.ObservedState{Provider: "p", Zone: zone, DNSName: "a-" + svcName(i)})
}

// defaults are the guard's limits as the flags set them.
var defaults = Config{MaxDeletes: DefaultMaxDeletes, MaxDeletesPercent: DefaultMaxDeletesPercent, MaxDeletesWindow: DefaultMaxDeletesWindow}

// TestPacedWipeIsHeld: 15 of a zone's 20 owned record sets made unwanted
// one every 20 ms, against a provider that applies at once, so that every
// pass sees one delete. Judged one pass at a time each is within the
// limits and all 15 go; judged over the window, no more go than one burst
// would let through, and the rest is held.
func TestPacedWipeIsHeld(t *testing.T) {
	g := newGuardedWith(t, 20, defaults)
	went := 0
	for i := range 15 {
		g.want(i)
		if got := deleted(g.pass()); len(got) > 0 {
			went += len(got)
			g.gone(i)
		}
		time.Sleep(20 * time.Millisecond)
	}
	h := g.held()
	// Over 30% of 20 is 7: six may go, the rest waits for an operator.
	if went != 6 || h.Deletes != 9 || h.Recent != 6 || h.Owned != 20 {
		t.Fatalf("paced wipe: %d deleted, %d held (%d recent, of %d owned), want 6 deleted and 9 held of 20", went, h.Deletes, h.Recent, h.Owned)
	}
}

// TestChurnIsNeverHeld: a few deletes a minute in a zone of hundreds, as
// users remove what they no longer want, are planned as they come.
func TestChurnIsNeverHeld(t *testing.T) {
	g := newGuardedWith(t, 200, defaults)
	for i := range 12 {
		g.want(i)
		if got := deleted(g.pass()); len(got) != 1 {
			t.Fatalf("delete %d of a zone of 200 (12 within the window): planned %v", i+1, got)
		}
		g.gone(i)
	}
	if h := g.held(); !h.IsTombstone() {
		t.Fatalf("churn was held: %+v", h)
	}
}

// TestWindowForgetsOldDeletes: deletes older than the window count no
// more: a zone may lose a few record sets every window for good.
func TestWindowForgetsOldDeletes(t *testing.T) {
	cfg := defaults
	cfg.MaxDeletesWindow = 200 * time.Millisecond
	g := newGuardedWith(t, 10, cfg)
	for i := range 3 {
		g.want(i)
	}
	if got := deleted(g.pass()); len(got) != 3 {
		t.Fatalf("3 deletes (the absolute limit): planned %v", got)
	}
	for i := range 3 {
		g.gone(i)
	}
	g.want(3)
	if got := deleted(g.pass()); len(got) != 0 || g.held().Deletes != 1 {
		t.Fatalf("a 4th delete within the window of a zone of 10 must be held: planned %v, held %+v", got, g.held())
	}
	time.Sleep(250 * time.Millisecond)
	g.want(4)
	if got, h := deleted(g.pass()), g.held(); len(got) != 2 || !h.IsTombstone() {
		t.Fatalf("after the window, 2 deletes are within the limits and the hold is released: planned %v, held %+v", got, h)
	}
}
