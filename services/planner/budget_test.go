package planner

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

// aaaaTargets are n distinct IPv6 addresses (about 20 bytes each in a plan).
func aaaaTargets(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("2001:db8::%x:%x", i>>16, i&0xffff)
	}
	return out
}

// TestPlansAreBoundedInBytes: a plan is one NATS message. Names whose
// changes together exceed the connection's max payload go out in several
// plans, each well under it; a name whose changes alone exceed it is
// refused (counted, logged) and not planned again in a loop, and it holds
// back no other name.
func TestPlansAreBoundedInBytes(t *testing.T) {
	nc, js := startBus(t)
	s := freshRun(t, js, Config{})
	maxPayload := int(nc.MaxPayload())
	var names []string
	for i := range 6 { // ~250 kB each, 1.5 MB together
		name := fmt.Sprintf("m%d.%s", i, zone)
		names = append(names, name)
		feed(t, s, events.DesiredSubject(name), &events.DesiredState{DNSName: name,
			Endpoints: []events.Endpoint{rr(name, "AAAA", 0, aaaaTargets(maxPayload/(6*20))...)}})
	}
	// One endpoint holds at most events.MaxTargets targets, so the name too
	// large for any plan holds several record sets (set identifiers).
	big := "big." + zone
	var bigSets []events.Endpoint
	for i := range 10 {
		e := rr(big, "AAAA", 0, aaaaTargets(events.MaxTargets)...)
		e.SetIdentifier = fmt.Sprintf("set-%d", i)
		bigSets = append(bigSets, e)
	}
	feed(t, s, events.DesiredSubject(big), &events.DesiredState{DNSName: big, Endpoints: bigSets})
	before := testutil.ToFloat64(refused.WithLabelValues(refusedSize))
	sub := planSub(t, nc)

	s.plan(context.Background())
	f := s.flights[zoneKey{"p", zone}]
	if f == nil || len(f.plans) == 0 {
		t.Fatal("nothing was published")
	}
	var planned []string
	for range len(f.plans) {
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if size := len(msg.Data) + len(msg.Header); size > maxPayload/2+4096 {
			t.Errorf("a plan of %d bytes; the limit is %d", size, maxPayload)
		}
		var p events.Plan
		if err := events.Unmarshal(msg.Header, msg.Data, &p); err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Changes {
			if c.Key().RecordType == "AAAA" {
				planned = append(planned, c.Key().DNSName)
			}
		}
	}
	slices.Sort(planned)
	if !slices.Equal(planned, names) {
		t.Fatalf("planned %v, want %v", planned, names)
	}
	if testutil.ToFloat64(refused.WithLabelValues(refusedSize)) <= before {
		t.Fatal("the oversized name was not counted as refused")
	}
	if _, dirty := s.dirty[big]; dirty {
		t.Fatal("the oversized name stays scheduled: it would be planned again and again")
	}
}

// TestFailedPublishBacksOffPerZone: a plan that cannot be published (here
// the plans stream is gone) holds its zone back, longer at each failure,
// instead of re-planning it at once.
func TestFailedPublishBacksOffPerZone(t *testing.T) {
	_, js := startBus(t)
	if err := js.DeleteStream(context.Background(), events.StreamPlans); err != nil {
		t.Fatal(err)
	}
	s := freshRun(t, js, Config{})
	www := "www." + zone
	feed(t, s, events.DesiredSubject(www), &events.DesiredState{DNSName: www,
		Endpoints: []events.Endpoint{rr(www, "A", 0, "192.0.2.1")}})
	k := zoneKey{"p", zone}

	s.plan(context.Background())
	if s.plannable() || s.flights[k] == nil {
		t.Fatal("a zone whose plan could not be published is planned again at once")
	}
	first := s.flights[k].notBefore
	if _, dirty := s.dirty[www]; !dirty {
		t.Fatal("the name is no longer scheduled: its change would be lost")
	}
	s.flights[k].notBefore = time.Time{} // the back-off is over
	s.plan(context.Background())
	if second := s.flights[k].notBefore; time.Until(second) <= time.Until(first)/2 {
		t.Fatalf("second back-off (%s) not longer than the first (%s)", time.Until(second), time.Until(first))
	}
	if !s.busy(k, time.Now()) || s.busy(k, time.Now().Add(2*publishBackoffMax)) {
		t.Fatal("the back-off must hold the zone, and end")
	}
}
