package applier_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestReadBackTouchedNames: after a plan the applier publishes what the
// provider holds at the names the plan touched (a deleted name gets its
// tombstone), and nothing else: an edit by hand at another name waits for
// the next full listing (here an hour away).
func TestReadBackTouchedNames(t *testing.T) {
	js := bus(t)
	b := bind.StartT(t, zone)
	start(t, js, rfcConfig(b, time.Hour))

	sendPlan(t, js, &events.Plan{ID: "r1", Provider: "rfc2136", Zone: zone, Changes: []events.Change{
		{New: ep("a.example.org", "A", "192.0.2.1")},
		{New: ep("b.example.org", "A", "192.0.2.2")},
	}})
	if res, _ := waitResult(t, js, "r1"); res.Status != events.ResultApplied {
		t.Fatalf("r1: %+v", res)
	}
	a, _ := observed(t, js, "a.example.org")
	if a == nil || len(a.Records) != 1 || a.Records[0].Targets[0] != "192.0.2.1" {
		t.Fatalf("a after r1: %+v", a)
	}

	// By hand: a record at a name no plan touches, and another type at a.
	other, _ := dns.NewRR("other.example.org. 60 IN A 192.0.2.50")
	aaaa, _ := dns.NewRR("a.example.org. 60 IN AAAA 2001:db8::1")
	if err := b.Update(zone, []dns.RR{other, aaaa}, nil); err != nil {
		t.Fatal(err)
	}
	_, bm := observed(t, js, "b.example.org")
	sendPlan(t, js, &events.Plan{ID: "r2", Provider: "rfc2136", Zone: zone, Changes: []events.Change{
		{Old: ep("b.example.org", "A", "192.0.2.2")},
		{Old: ep("a.example.org", "A", "192.0.2.1"), New: ep("a.example.org", "A", "192.0.2.3")},
	}})
	if res, _ := waitResult(t, js, "r2"); res.Status != events.ResultApplied {
		t.Fatalf("r2: %+v", res)
	}
	if st, m := observed(t, js, "b.example.org"); st == nil || len(st.Records) != 0 || m.Sequence == bm.Sequence {
		t.Fatalf("deleted b not observed as a tombstone: %+v", st)
	}
	// a is read back whole: the plan's A and the AAAA added by hand.
	if st, _ := observed(t, js, "a.example.org"); st == nil || len(st.Records) != 2 {
		t.Fatalf("a after r2: %+v", st)
	}
	if st, _ := observed(t, js, "other.example.org"); st != nil {
		t.Fatalf("a name no plan touched was read back before the full listing: %+v", st)
	}
}

// TestObservedStatesTooLargeForTheResult: when what a plan's names hold
// does not fit in one result, the applier stores the names' observed
// states first and publishes the result without them, with an
// ObservedSeq that covers them (what planners waited for before results
// carried states).
func TestObservedStatesTooLargeForTheResult(t *testing.T) {
	s := natsenv.StartT(t, natsenv.WithMaxPayload(16<<10))
	_, js := natsenv.Connect(t, s.ClientURL())
	if err := events.EnsureStreams(context.Background(), js, events.WithStorage(jetstream.MemoryStorage)); err != nil {
		t.Fatal(err)
	}
	b := bind.StartT(t, zone)
	// By hand: 90 addresses at each name the plan will touch (BIND takes
	// at most 100 records per type), 1.3 KB of observed state per name,
	// 26 KB for the twenty.
	const names, byHand = 20, 90
	for i := range names {
		var rrs []dns.RR
		for j := range byHand {
			rr, err := dns.NewRR(fmt.Sprintf("n%d.example.org. 60 IN A 198.51.%d.%d", i, i, j+1))
			if err != nil {
				t.Fatal(err)
			}
			rrs = append(rrs, rr)
		}
		if err := b.Update(zone, rrs, nil); err != nil {
			t.Fatal(err)
		}
	}
	start(t, js, rfcConfig(b, time.Hour))

	plan := &events.Plan{ID: "big", Provider: "rfc2136", Zone: zone}
	for i := range names {
		plan.Changes = append(plan.Changes, events.Change{New: ep(fmt.Sprintf("n%d.example.org", i), "AAAA", "2001:db8::1")})
	}
	sendPlan(t, js, plan)
	res, _ := waitResult(t, js, "big")
	if res.Status != events.ResultApplied || len(res.Observed) != 0 {
		t.Fatalf("result %s, carrying %d observed states; want applied, carrying none", res.Status, len(res.Observed))
	}
	for i := range names {
		st, m := observed(t, js, fmt.Sprintf("n%d.example.org", i))
		if st == nil {
			t.Fatalf("n%d: no observed state", i)
		}
		if len(st.Records) != 2 || m.Sequence > res.ObservedSeq {
			t.Fatalf("n%d: %d RRsets at seq %d; want A and AAAA stored before the result (ObservedSeq %d)",
				i, len(st.Records), m.Sequence, res.ObservedSeq)
		}
	}
}
