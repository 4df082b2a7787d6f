package applier_test

import (
	"context"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"

	"github.com/miekg/dns"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

func pdnsConfig(s *pdnsenv.Server, interval time.Duration) applier.Config {
	return applier.Config{
		Provider: applier.ProviderPDNS, Interval: interval, DefaultTTL: 300,
		PDNS: pdns.Config{
			Server: s.APIURL, APIKey: s.APIKey, ServerID: pdnsenv.ServerID,
			RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond},
		},
	}
}

// Helpers that take the provider's name (applier_test.go's observed,
// sendPlan and waitResult are these for rfc2136).

func observedAt(t *testing.T, js jetstream.JetStream, prov, name string) (*events.ObservedState, *jetstream.RawStreamMsg) {
	t.Helper()
	m := lastMsg(t, js, events.StreamObserved, events.ObservedSubject(prov, name))
	if m == nil {
		return nil, nil
	}
	var st events.ObservedState
	if err := events.Unmarshal(m.Header, m.Data, &st); err != nil {
		t.Fatal(err)
	}
	return &st, m
}

// sendPlanTo publishes a plan to prov's applier and returns its event id.
func sendPlanTo(t *testing.T, js jetstream.JetStream, prov string, p *events.Plan) string {
	t.Helper()
	msg, err := events.Message(events.PlanSubject(prov, zone), p, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	return msg.Header.Get(events.HeaderEventID)
}

func waitResultOf(t *testing.T, js jetstream.JetStream, prov, planID string) (events.Result, *jetstream.RawStreamMsg) {
	t.Helper()
	var res events.Result
	var raw *jetstream.RawStreamMsg
	waitFor(t, "result of plan "+planID, func() bool {
		raw = lastMsg(t, js, events.StreamResults, events.ResultSubject(prov, zone))
		if raw == nil {
			return false
		}
		res = events.Result{}
		if err := events.Unmarshal(raw.Header, raw.Data, &res); err != nil {
			t.Fatal(err)
		}
		return res.PlanID == planID
	})
	return res, raw
}

func TestEndToEndPDNS(t *testing.T) {
	const prov = applier.ProviderPDNS
	s := pdnsenv.StartT(t, zone)
	js := bus(t)
	if err := s.Plant(zone, "planted.example.org", "A", 60, "192.0.2.50"); err != nil {
		t.Fatal(err)
	}

	r := start(t, js, pdnsConfig(s, time.Hour))

	// The first listing: every name, then the zone list.
	st, pm := observedAt(t, js, prov, "planted.example.org")
	if st == nil || len(st.Records) != 1 || st.Records[0].Targets[0] != "192.0.2.50" || st.Zone != zone || st.Provider != prov {
		t.Fatalf("planted record not observed: %+v", st)
	}
	if ns, _ := observedAt(t, js, prov, "ns.example.org"); ns == nil {
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
		t.Fatalf("PowerDNS answers %v", got)
	}
	if got := providertest.Answers(t, s, "www.example.org", dns.TypeTXT); !slices.Equal(got, []string{owner}) {
		t.Fatalf("PowerDNS answers TXT %v", got)
	}
	www, wm := observedAt(t, js, prov, "www.example.org")
	if www == nil || len(www.Records) != 2 || wm.Header.Get(events.HeaderCausation) != id1 || wm.Sequence > res.ObservedSeq {
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
		t.Fatalf("stale plan changed PowerDNS: %v", got)
	}
	if got := providertest.Answers(t, s, "fresh.example.org", dns.TypeA); len(got) != 0 {
		t.Fatalf("stale plan partly applied: %v", got)
	}

	// One bad change does not block the others: PowerDNS refuses the
	// PATCH (422), the applier isolates the bad change.
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

	// An update with the observed state as Old.
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
	r = start(t, js, pdnsConfig(s, 200*time.Millisecond))
	time.Sleep(500 * time.Millisecond) // a few periodic listings
	if after, _ := lastSeq(t, js, events.StreamObserved); after != before {
		t.Fatalf("restart republished: observed seq %d -> %d", before, after)
	}

	// Drift: an out-of-band change becomes observed state; a removed name a tombstone.
	if err := s.Plant(zone, "drift.example.org", "A", 60, "192.0.2.60"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(zone, "planted.example.org", "A"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "drift observed", func() bool { st, _ := observedAt(t, js, prov, "drift.example.org"); return st != nil })
	waitFor(t, "tombstone", func() bool {
		st, _ := observedAt(t, js, prov, "planted.example.org")
		return st != nil && len(st.Records) == 0
	})

	// PowerDNS down: listings fail, no tombstones, not ready.
	before, _ = lastSeq(t, js, events.StreamObserved)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "not ready", func() bool { return r.a.Ready() != nil })
	if after, _ := lastSeq(t, js, events.StreamObserved); after != before {
		t.Fatalf("failed listings published: observed seq %d -> %d", before, after)
	}
	if www, _ := observedAt(t, js, prov, "www.example.org"); www == nil || len(www.Records) != 2 {
		t.Fatalf("www lost while PowerDNS was down: %+v", www)
	}
	// A plan while PowerDNS is down fails, is acked, and the applier goes on.
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

func TestConfigPDNS(t *testing.T) {
	var cfg applier.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if cfg.PDNS.Server != "http://localhost:8081" || cfg.PDNS.ServerID != "localhost" {
		t.Fatalf("pdns flag defaults: %+v", cfg.PDNS)
	}
	err := fs.Parse([]string{"--provider=pdns", "--pdns-server=https://pdns.example.org:8443", "--pdns-api-key=secret",
		"--pdns-server-id=main", "--pdns-skip-tls-verify"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PDNS.Server != "https://pdns.example.org:8443" || cfg.PDNS.APIKey != "secret" || cfg.PDNS.ServerID != "main" || !cfg.PDNS.SkipTLSVerify {
		t.Fatalf("flags not parsed: %+v", cfg.PDNS)
	}
	a, err := applier.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Provider().(*pdns.Provider); !ok {
		t.Fatalf("provider %T", a.Provider())
	}
	t.Setenv(pdns.APIKeyEnv, "")
	c := cfg
	c.PDNS.APIKey = ""
	if _, err := applier.New(c, nil); err == nil {
		t.Error("pdns without an API key accepted")
	}
	c = cfg
	c.PDNS.Server = "localhost:8081"
	if _, err := applier.New(c, nil); err == nil {
		t.Error("pdns server without a scheme accepted")
	}
}
