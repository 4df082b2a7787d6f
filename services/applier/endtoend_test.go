package applier_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/coredns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	corednsenv "github.com/zonestream/zonestream/testenv/coredns"
)

// endToEnd runs the applier for provider prov (built by config, listing
// every interval) against the real server s, serving example.org, through
// its whole cycle: the first listing, plans applied, stale and partly bad
// plans, garbage, a restart, drift, and the server going down. apexNS says
// the zone has NS records at ns.example.org (not in etcd).
func endToEnd(t *testing.T, prov string, s providertest.Server, apexNS bool, config func(interval time.Duration) applier.Config) {
	js := bus(t)
	if err := s.Plant("planted.example.org", "A", 60, "192.0.2.50"); err != nil {
		t.Fatal(err)
	}

	r := start(t, js, config(time.Hour))

	// The first listing: every name, then the zone list.
	st, pm := observedAt(t, js, prov, "planted.example.org")
	if st == nil || len(st.Records) != 1 || st.Records[0].Targets[0] != "192.0.2.50" || st.Zone != zone || st.Provider != prov {
		t.Fatalf("planted record not observed: %+v", st)
	}
	if ns, _ := observedAt(t, js, prov, "ns.example.org"); apexNS && ns == nil {
		t.Fatal("ns.example.org not observed")
	}
	zm := lastMsg(t, js, events.StreamObserved, events.ZonesSubject(prov))
	if zm == nil {
		t.Fatal("no zone list")
	}
	var zl events.ZoneList
	if err := events.Unmarshal(zm.Header, zm.Data, &zl); err != nil || !slices.Equal(zl.Zones, []string{zone}) {
		t.Fatalf("zone list %+v %v", zl, err)
	}
	if zm.Sequence < pm.Sequence {
		t.Fatal("zone list published before the zone's records")
	}

	// A plan creates records.
	owner := "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/default/web"
	id1 := sendPlanTo(t, js, prov, &events.Plan{ID: "p1", Provider: prov, Zone: zone, Changes: []events.Change{
		{New: ep("www.example.org", "TXT", owner)},
		{New: ep("www.example.org", "A", "192.0.2.1")},
	}})
	res, raw := waitResultOf(t, js, prov, "p1")
	if res.Status != events.ResultApplied || res.Applied != 2 || res.ObservedSeq == 0 {
		t.Fatalf("p1: %+v", res)
	}
	if raw.Header.Get(events.HeaderCausation) != id1 {
		t.Fatalf("result causation %q, want %q", raw.Header.Get(events.HeaderCausation), id1)
	}
	if got := providertest.Answers(t, s, "www.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("the server answers %v", got)
	}
	if got := providertest.Answers(t, s, "www.example.org", dns.TypeTXT); !slices.Equal(got, []string{owner}) {
		t.Fatalf("the server answers TXT %v", got)
	}
	// A provider that reads names back: the result carries what the plan
	// changed, stored right after it. CoreDNS lists the zone instead,
	// which stores what it finds before the result.
	www, wm := observedAt(t, js, prov, "www.example.org")
	if prov == coredns.Name {
		if len(res.Observed) != 0 || wm == nil || wm.Sequence > res.ObservedSeq {
			t.Fatalf("p1's result carries %+v, or its ObservedSeq %d does not cover www", res.Observed, res.ObservedSeq)
		}
	} else if len(res.Observed) != 1 || res.Observed[0].DNSName != "www.example.org" || len(res.Observed[0].Records) != 2 ||
		wm == nil || wm.Sequence <= res.ObservedSeq {
		t.Fatalf("p1's result carries %+v, stored after its ObservedSeq %d", res.Observed, res.ObservedSeq)
	}
	if www == nil || len(www.Records) != 2 || wm.Header.Get(events.HeaderCausation) != id1 {
		t.Fatalf("observed www after p1: %+v", www)
	}
	for _, rec := range www.Records {
		if rec.RecordType == "TXT" && (len(rec.Targets) != 1 || rec.Targets[0] != owner) {
			t.Fatalf("observed TXT %q, want it unquoted", rec.Targets)
		}
	}

	// A plan computed from the old state is stale and changes nothing.
	sendPlanTo(t, js, prov, &events.Plan{ID: "p2", Provider: prov, Zone: zone, Changes: []events.Change{
		{New: ep("fresh.example.org", "A", "192.0.2.98")},
		{New: ep("www.example.org", "A", "192.0.2.99")},
	}})
	res, _ = waitResultOf(t, js, prov, "p2")
	if res.Status != events.ResultStale || res.Applied != 0 {
		t.Fatalf("p2: %+v", res)
	}
	if got := providertest.Answers(t, s, "www.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("stale plan changed the server: %v", got)
	}
	if got := providertest.Answers(t, s, "fresh.example.org", dns.TypeA); len(got) != 0 {
		t.Fatalf("stale plan partly applied: %v", got)
	}

	// One bad change does not block the others: the server (or the
	// provider) refuses it, the applier isolates it.
	sendPlanTo(t, js, prov, &events.Plan{ID: "p3", Provider: prov, Zone: zone, Changes: []events.Change{
		{New: ep("good1.example.org", "A", "192.0.2.7")},
		{New: ep("bad.example.org", "A", "not-an-ip")},
		{New: ep("good2.example.org", "A", "192.0.2.8")},
	}})
	res, _ = waitResultOf(t, js, prov, "p3")
	if res.Status != events.ResultPartial || res.Applied != 2 || len(res.Failed) != 1 || res.Failed[0].Change.New.DNSName != "bad.example.org" {
		t.Fatalf("p3: %+v", res)
	}
	if got := providertest.Answers(t, s, "good2.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.8"}) {
		t.Fatalf("good2: %v", got)
	}

	// Garbage goes to the dead-letter subject; the applier keeps working.
	if _, err := js.Publish(context.Background(), events.PlanSubject(prov, zone), []byte("\xc1 not msgpack")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "dead letter", func() bool {
		return lastMsg(t, js, events.StreamDeadLetter, events.DeadLetterSubject(applier.Name)) != nil
	})

	// An update with the observed state as Old, and a delete.
	sendPlanTo(t, js, prov, &events.Plan{ID: "p4", Provider: prov, Zone: zone, Changes: []events.Change{
		{Old: ep("www.example.org", "A", "192.0.2.1"), New: ep("www.example.org", "A", "192.0.2.2")},
		{Old: ep("good1.example.org", "A", "192.0.2.7")},
	}})
	res, _ = waitResultOf(t, js, prov, "p4")
	if res.Status != events.ResultApplied || res.Applied != 2 {
		t.Fatalf("p4: %+v", res)
	}
	if got := providertest.Answers(t, s, "www.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("after p4: %v", got)
	}
	if g, _ := observedAt(t, js, prov, "good1.example.org"); g == nil || len(g.Records) != 0 {
		t.Fatalf("deleted good1 not observed as a tombstone: %+v", g)
	}
	if _, msgs := lastSeq(t, js, events.StreamPlans); msgs != 0 {
		t.Fatalf("%d plans left unacked", msgs)
	}

	// Restart: nothing unchanged is published again.
	r.stop()
	before, _ := lastSeq(t, js, events.StreamObserved)
	r = start(t, js, config(200*time.Millisecond))
	time.Sleep(500 * time.Millisecond) // a few periodic listings
	if after, _ := lastSeq(t, js, events.StreamObserved); after != before {
		t.Fatalf("restart republished: observed seq %d -> %d", before, after)
	}

	// Drift: an out-of-band change becomes observed state; a removed name a tombstone.
	if err := s.Plant("drift.example.org", "A", 60, "192.0.2.60"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("planted.example.org", "A"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "drift observed", func() bool { st, _ := observedAt(t, js, prov, "drift.example.org"); return st != nil })
	waitFor(t, "tombstone", func() bool {
		st, _ := observedAt(t, js, prov, "planted.example.org")
		return st != nil && len(st.Records) == 0
	})

	// The server down: listings fail, no tombstones, not ready.
	before, _ = lastSeq(t, js, events.StreamObserved)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "not ready", func() bool { return r.a.Ready() != nil })
	if after, _ := lastSeq(t, js, events.StreamObserved); after != before {
		t.Fatalf("failed listings published: observed seq %d -> %d", before, after)
	}
	if www, _ := observedAt(t, js, prov, "www.example.org"); www == nil || len(www.Records) != 2 {
		t.Fatalf("www lost while the server was down: %+v", www)
	}
	// A plan while the server is down fails, is acked, and the applier goes on.
	sendPlanTo(t, js, prov, &events.Plan{ID: "p5", Provider: prov, Zone: zone, Changes: []events.Change{
		{New: ep("down.example.org", "A", "192.0.2.9")},
	}})
	res, _ = waitResultOf(t, js, prov, "p5")
	if res.Status != events.ResultFailed || res.Error == "" {
		t.Fatalf("p5: %+v", res)
	}
	if after, _ := lastSeq(t, js, events.StreamObserved); after != before {
		t.Fatalf("failed plan published observed state: %d -> %d", before, after)
	}
}

func TestEndToEndCoreDNS(t *testing.T) {
	s := corednsenv.StartT(t, zone)
	endToEnd(t, coredns.Name, providertest.CoreDNS{Server: s}, false, func(interval time.Duration) applier.Config {
		return applier.Config{
			Provider: coredns.Name, Interval: interval, DefaultTTL: 300,
			CoreDNS: coredns.Config{
				EtcdURLs: []string{s.EtcdURL}, Zones: []string{zone},
				RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond},
			},
		}
	})
}
