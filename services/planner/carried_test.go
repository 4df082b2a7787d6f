package planner

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// heldAfter is what plan put at its names, as an applier reads it back.
func heldAfter(plan events.Plan) []events.ObservedState {
	byName := map[string][]events.Endpoint{}
	for _, c := range plan.Changes {
		if c.New != nil {
			byName[c.New.DNSName] = append(byName[c.New.DNSName], *c.New)
		}
	}
	var states []events.ObservedState
	for name, records := range byName {
		states = append(states, events.ObservedState{Provider: "p", Zone: zone, DNSName: name, Records: records})
	}
	return states
}

// TestCarriedStatesPlanTheNextChange: a result that carries what its plan
// changed is enough to plan the zone's next change from the provider's new
// state, before the observed stream holds it (the applier stores it after
// the result). Planned from the stream alone, the second change would
// create the record again instead of updating it.
func TestCarriedStatesPlanTheNextChange(t *testing.T) {
	nc, js := startBus(t)
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	www := "www." + zone
	wanted(t, js, rr(www, "A", 0, "192.0.2.1"))
	first := nextPlan(t, sub)
	if got := planLines(first); !slices.Contains(got, "create A www 192.0.2.1") {
		t.Fatalf("first plan:\n%s", strings.Join(got, "\n"))
	}
	seq := observedLastSeq(t, js)
	publish(t, js, events.ResultSubject("p", zone), &events.Result{PlanID: first.ID, Provider: "p", Zone: zone,
		Status: events.ResultApplied, Applied: len(first.Changes), ObservedSeq: seq, Observed: heldAfter(first)})

	wanted(t, js, rr(www, "A", 0, "192.0.2.2"))
	got := planLines(nextPlan(t, sub))
	if !slices.Equal(got, []string{"update A www 192.0.2.2"}) {
		t.Fatalf("second plan, from the state the result carried:\n%s", strings.Join(got, "\n"))
	}
}

// observedLastSeq is the observed stream's last sequence.
func observedLastSeq(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), events.StreamObserved)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// TestCarriedStatesOrder: a message of the observed stream stored before
// the result's read-back is older than the state the result carried and
// is ignored; the copy stored after it changes nothing and re-plans
// nothing; what comes after that is taken as always.
func TestCarriedStatesOrder(t *testing.T) {
	_, js := startBus(t)
	s := freshRun(t, js, Config{})
	www, other := "www."+zone, "other."+zone
	a := func(ip string) events.Endpoint { return rr(www, "A", 0, ip) }
	state := func(eps ...events.Endpoint) *events.ObservedState {
		return &events.ObservedState{Provider: "p", Zone: zone, DNSName: www, Records: eps}
	}
	feedAt(t, s, events.ObservedSubject("p", www), state(a("192.0.2.1")), 3)
	res := &events.Result{PlanID: "x", Provider: "p", Zone: zone, ObservedSeq: 10, Observed: []events.ObservedState{
		*state(a("192.0.2.2")),
		{Provider: "p", Zone: "other.test", DNSName: other, Records: []events.Endpoint{rr(other, "A", 0, "192.0.2.9")}},
	}}
	s.foldCarried(res, "")
	targets := func() string { return strings.Join(s.observed["p"][www].records[0].Targets, ",") }
	if got := targets(); got != "192.0.2.2" {
		t.Fatalf("after the result www holds %s, want the carried 192.0.2.2", got)
	}
	if _, ok := s.observed["p"][other]; ok {
		t.Fatal("a result set the state of a name in another zone")
	}

	feedAt(t, s, events.ObservedSubject("p", www), state(a("192.0.2.1")), 8)
	if got := targets(); got != "192.0.2.2" {
		t.Fatalf("a message stored before the read-back overwrote the carried state: %s", got)
	}
	clear(s.dirty)
	feedAt(t, s, events.ObservedSubject("p", www), state(a("192.0.2.2")), 11)
	if _, dirty := s.dirty[www]; dirty || s.observed["p"][www].seq != 11 {
		t.Fatalf("the stored copy of the carried state: dirty %v, seq %d", dirty, s.observed["p"][www].seq)
	}
	feedAt(t, s, events.ObservedSubject("p", www), state(a("192.0.2.3")), 12)
	if got := targets(); got != "192.0.2.3" {
		t.Fatalf("a newer state after the copy was not taken: %s", got)
	}

	// Read past the read-back already, with the name empty: a tombstone
	// may be what emptied it, so the carried state is not taken.
	feedAt(t, s, events.ObservedSubject("p", www), state(), 20)
	s.foldCarried(&events.Result{PlanID: "y", Provider: "p", Zone: zone, ObservedSeq: 15,
		Observed: []events.ObservedState{*state(a("192.0.2.4"))}}, "")
	if _, ok := s.observed["p"][www]; ok {
		t.Fatal("a carried state older than a tombstone read before it was taken")
	}
}

// TestCarriedStateOfANewName: a name the planner never read anything of
// takes the state a result carries, however far the planner has read
// other names: with several plans out, the stores of an earlier plan
// often come after a later plan's read-back. Refused, the name would be
// planned again from nothing (a create the provider refuses). A tombstone
// read after the read-back still wins, until no plan out can get a result
// from before it.
func TestCarriedStateOfANewName(t *testing.T) {
	_, js := startBus(t)
	s := freshRun(t, js, Config{})
	www, other := "www."+zone, "other."+zone
	state := func(name string, ips ...string) events.ObservedState {
		o := events.ObservedState{Provider: "p", Zone: zone, DNSName: name}
		for _, ip := range ips {
			o.Records = append(o.Records, rr(name, "A", 0, ip))
		}
		return o
	}
	o := state(other, "192.0.2.9")
	feedAt(t, s, events.ObservedSubject("p", other), &o, 20)
	s.foldCarried(&events.Result{PlanID: "x", Provider: "p", Zone: zone, ObservedSeq: 15,
		Observed: []events.ObservedState{state(www, "192.0.2.1")}}, "")
	if _, ok := s.observed["p"][www]; !ok {
		t.Fatal("the carried state of a name never read before was refused")
	}

	gone := state(www)
	k := zoneKey{"p", zone}
	s.flights[k] = &flight{plans: map[string]planned{"first": {readSeq: 25}, "last": {readSeq: 26}}}
	feedAt(t, s, events.ObservedSubject("p", www), &gone, 30)
	// The first result must not prune the tombstone: the last plan out
	// went out before it was read. The last result's read-back (28) is
	// older than the tombstone, which must count for it before it goes.
	feed(t, s, events.ResultSubject("p", zone), &events.Result{PlanID: "first", Provider: "p", Zone: zone,
		Status: events.ResultApplied, ObservedSeq: 27})
	feed(t, s, events.ResultSubject("p", zone), &events.Result{PlanID: "last", Provider: "p", Zone: zone,
		Status: events.ResultApplied, ObservedSeq: 28, Observed: []events.ObservedState{state(www, "192.0.2.1")}})
	if _, ok := s.observed["p"][www]; ok {
		t.Fatal("a carried state older than a tombstone read before it was taken")
	}
	if n := len(s.carried.emptied["p"]); n != 0 {
		t.Fatalf("%d tombstones kept with no plan out", n)
	}
}

// TestZoneFreedByACopyOfACarriedState: a zone whose last result's
// read-back is ahead of what the planner has read comes free when the
// stored copy of a carried state is read. That copy marks no name (it
// changes nothing), yet a name that changed while the zone was busy must
// be planned then, not when some later message happens to come.
func TestZoneFreedByACopyOfACarriedState(t *testing.T) {
	nc, js := startBus(t)
	s := freshRun(t, js, Config{})
	sub := planSub(t, nc)
	ctx := context.Background()
	www, api := "www."+zone, "api."+zone
	want := func(name string) {
		feed(t, s, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
			Endpoints: []events.Endpoint{rr(name, "A", 0, "192.0.2.1")}})
	}
	want(www)
	s.plan(ctx)
	want(api)
	first := nextPlan(t, sub)
	if s.plannable() {
		t.Fatal("a name was plannable while its zone's plan was out")
	}
	carried := heldAfter(first)
	const readBack = 10
	feed(t, s, events.ResultSubject("p", zone), &events.Result{PlanID: first.ID, Provider: "p", Zone: zone,
		Status: events.ResultApplied, Applied: len(first.Changes), ObservedSeq: readBack, Observed: carried})
	if s.plannable() {
		t.Fatal("the zone was free before the planner read the observed stream to its result's read-back")
	}
	for i, o := range carried {
		feedAt(t, s, events.ObservedSubject("p", o.DNSName), &o, readBack+1+uint64(i))
	}
	if _, dirty := s.dirty[api]; !dirty || !s.plannable() {
		t.Fatalf("read to the read-back, the zone is free, yet %s (dirty %v) is not planned", api, dirty)
	}
	s.plan(ctx)
	if got := planLines(nextPlan(t, sub)); !slices.Contains(got, "create A api 192.0.2.1") {
		t.Fatalf("plan after the zone came free:\n%s", strings.Join(got, "\n"))
	}
}

// TestZoneFreedByAnUnreadableObservedMessage: the message at a zone's
// read-back may be unreadable (garbage on an observed subject). It is
// still read: the zone comes free, and waits for no later message.
func TestZoneFreedByAnUnreadableObservedMessage(t *testing.T) {
	nc, js := startBus(t)
	s := freshRun(t, js, Config{})
	sub := planSub(t, nc)
	ctx := context.Background()
	www := "www." + zone
	feed(t, s, events.DesiredSubject(www), &events.DesiredState{DNSName: www,
		Endpoints: []events.Endpoint{rr(www, "A", 0, "192.0.2.1")}})
	s.plan(ctx)
	first := nextPlan(t, sub)
	const readBack = 10
	feed(t, s, events.ResultSubject("p", zone), &events.Result{PlanID: first.ID, Provider: "p", Zone: zone,
		Status: events.ResultApplied, Applied: len(first.Changes), ObservedSeq: readBack})
	if !s.busy(zoneKey{"p", zone}, time.Now()) {
		t.Fatal("the zone was free before the planner read the observed stream to its result's read-back")
	}
	s.fold(ctx, events.Received{Subject: events.ObservedSubject("p", "junk."+zone), Data: []byte("not msgpack"), Seq: readBack, Live: true})
	if s.busy(zoneKey{"p", zone}, time.Now()) {
		t.Fatal("an unreadable message at the read-back left the zone busy")
	}
}
