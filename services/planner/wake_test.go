package planner

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

// TestWakeAt: the loop sleeps until the earliest of a plan's deadline, a
// back-off's end and the completeness lease; with none of them, forever.
func TestWakeAt(t *testing.T) {
	now := time.Now()
	in := func(d time.Duration) time.Time { return now.Add(d) }
	out := map[string]planned{"p1": {}}
	for _, c := range []struct {
		name     string
		complete bool
		until    time.Time
		flights  []*flight
		want     time.Time
	}{
		{name: "at rest, deletes held"},
		{name: "at rest, the lease to renew", complete: true, until: in(90 * time.Second), want: in(90 * time.Second)},
		{name: "a lease kept while deletes are held is no reason", until: in(time.Minute)},
		{name: "a plan out", complete: true, until: in(90 * time.Second),
			flights: []*flight{{plans: out, deadline: in(time.Minute)}}, want: in(time.Minute)},
		{name: "a deadline without plans is no reason", flights: []*flight{{plans: map[string]planned{}, deadline: in(time.Minute)}}},
		{name: "a back-off", flights: []*flight{{notBefore: in(time.Second)}, {plans: out, deadline: in(time.Minute)}}, want: in(time.Second)},
		{name: "a back-off that ended", flights: []*flight{{notBefore: in(-time.Second)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newRun(&Planner{})
			s.complete, s.completeUntil = c.complete, c.until
			for i, f := range c.flights {
				s.flights[zoneKey{"p", string(rune('a'+i)) + ".test"}] = f
			}
			if got := s.wakeAt(); !got.Equal(c.want) {
				t.Fatalf("wakeAt %v, want %v", got.Sub(now), c.want.Sub(now))
			}
		})
	}
}

// TestLapsedCompletenessHoldsDeletesAtRest: the planner no longer ticks,
// so the completeness lease must still lapse on time with no message
// coming, and a plan made after it must not delete.
func TestLapsedCompletenessHoldsDeletesAtRest(t *testing.T) {
	nc, js := startBus(t)
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	publish(t, js, events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c"},
		LeaseMillis: 300})
	waitUntil(t, "deletes allowed", func() bool { return testutil.ToFloat64(deletesAllowed) == 1 })
	waitUntil(t, "the lease to lapse with no message coming", func() bool { return testutil.ToFloat64(deletesAllowed) == 0 })
	www := "www." + zone
	held(t, js, rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", "")))
	if msg, err := sub.NextMsg(time.Second); err == nil {
		t.Fatalf("planned after the completeness lease lapsed: %s", msg.Subject)
	}
}

// TestPlanChecksTheLeaseItself: a lease that lapsed before the alarm rang
// (a loop busy with a burst) holds deletes all the same.
func TestPlanChecksTheLeaseItself(t *testing.T) {
	nc, js := startBus(t)
	s := freshRun(t, js, Config{BatchChangeSize: 10})
	www := "www." + zone
	s.observed["p"] = map[string]observedEntry{
		www:        {records: []events.Endpoint{rr(www, "A", 300, "192.0.2.1")}},
		"a-" + www: {records: []events.Endpoint{rr("a-"+www, "TXT", 300, owned("me", ""))}},
	}
	s.complete, s.completeUntil = true, time.Now().Add(-time.Millisecond)
	s.mark(www, "")
	sub := planSub(t, nc)
	s.plan(context.Background())
	if msg, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("planned with a lapsed completeness lease: %s", msg.Subject)
	}
}

// TestZoneFreedByItsObservationIsPlanned: a zone waits for the observed
// state its last plan's result pointed at. When that observation comes in
// for a name already scheduled, the name must be planned then: the loop
// does not look again on a clock (TestChaos, the planner killed, left three
// ownership records behind without this).
func TestZoneFreedByItsObservationIsPlanned(t *testing.T) {
	_, js := startBus(t)
	s := freshRun(t, js, Config{})
	www := "www." + zone
	s.flights[zoneKey{"p", zone}] = &flight{plans: map[string]planned{"p1": {names: []string{www}, hash: "h1"}}}
	feedAt(t, s, events.ResultSubject("p", zone), &events.Result{PlanID: "p1", Provider: "p", Zone: zone,
		Status: events.ResultApplied, ObservedSeq: 10}, 1)
	if s.plannable() {
		t.Fatal("the zone was plannable before the observation its plan's result pointed at")
	}
	feedAt(t, s, events.ObservedSubject("p", www), &events.ObservedState{Provider: "p", Zone: zone, DNSName: www,
		Records: []events.Endpoint{rr(www, "A", 300, "192.0.2.1")}}, 10)
	if !s.plannable() {
		t.Fatal("the zone's awaited observation came in, and its scheduled name was not plannable")
	}
}
