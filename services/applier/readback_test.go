package applier_test

import (
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
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
